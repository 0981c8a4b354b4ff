// websocket_key: whether a Sec-WebSocket-Key is what RFC 6455 §4.2.1 requires of it: the
// base64 encoding of 16 bytes, so exactly 24 characters, the last two "==", the one before
// them carrying no bits beyond the 128 (A, Q, g or w). Beast only checks that the key is there
// and not longer than that; request_dispatch refuses any other key with 400.
//
// Contract: pure; any thread.
#pragma once

#include <string_view>

namespace megatts {

bool valid_websocket_key(std::string_view key);

}  // namespace megatts

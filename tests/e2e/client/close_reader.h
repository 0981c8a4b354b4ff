// close_reader: reads a connection until the server closes it, for tests of the closes the
// protocol promises (PROTOCOL.md §6): whatever comes before is skipped, the last error event
// before the close is kept (a fatal error names the reason of its close).
//
// Contract: read_until_close returns the close and that error, or fails on a receive error or
// when no close arrives within `timeout`. Thread: the client's. Blocking: up to the timeout.
#pragma once

#include <chrono>
#include <optional>

#include "daemon/client/tts_client.h"

namespace megatts::e2e {

struct closed_with {
    client::received_close close;
    std::optional<error_event> last_error;
};

result<closed_with> read_until_close(client::tts_client& client, std::chrono::milliseconds timeout);

}  // namespace megatts::e2e

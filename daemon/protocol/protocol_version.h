// protocol_version: the name of the wire protocol that daemon/PROTOCOL.md specifies.
//
// Contract: a compile-time constant. A client names it in `start.protocol` or as the WebSocket
// subprotocol; anything else is refused. Changing anything observable on the wire means a new
// name here and a new PROTOCOL.md.
#pragma once

#include <string_view>

namespace megatts {

inline constexpr std::string_view protocol_version = "megatts.v1";

}  // namespace megatts

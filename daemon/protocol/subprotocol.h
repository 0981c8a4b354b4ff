// subprotocol: the WebSocket subprotocol negotiation of PROTOCOL.md §1.
//
// Contract: negotiate_subprotocol takes the client's Sec-WebSocket-Protocol value (the
// comma-separated tokens of every such header, joined with commas; empty when none was sent):
// none when the client offered nothing (the version is then named in `start.protocol`),
// accepted when the offer lists megatts.v1 (the server then echoes it), refused otherwise
// (answered with HTTP 400 before the upgrade). Tokens compare exactly, ignoring the optional
// whitespace around commas. Pure; any thread.
#pragma once

#include <string_view>

namespace megatts {

enum class subprotocol_offer { none, accepted, refused };

subprotocol_offer negotiate_subprotocol(std::string_view offered);

}  // namespace megatts

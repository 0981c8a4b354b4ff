// ws_url: the server address of `megatts bench load`, written as a WebSocket URL
// (ws://HOST:PORT/PATH), split into what the clients need.
//
// Contract: parse_ws_url accepts the scheme ws (no TLS: the generator talks to the daemon on
// loopback or behind the balancer's plain side), a host (name, IPv4, or [IPv6]), an optional
// port (default 80) and a path (default /v1/tts). Errors name what is wrong (invalid_input).
// Resolving a name is resolve_host's business (blocking, once per run). Pure except resolve_host.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/result.h"

namespace megatts::bench {

struct ws_url {
    std::string host;  // as written, without brackets
    std::uint16_t port = 80;
    std::string path = "/v1/tts";
};

result<ws_url> parse_ws_url(const std::string& url);

// The first address `host` resolves to, as text (an IP literal resolves to itself).
result<std::string> resolve_host(const std::string& host);

}  // namespace megatts::bench

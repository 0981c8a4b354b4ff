// host_port: the HOST:PORT text of a request's Host header (RFC 7230 §5.4), with an IPv6
// address in brackets. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

namespace megatts::client {

inline std::string host_port(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace megatts::client

// listen_address: where `megatts serve` listens, parsed from "HOST:PORT".
//
// Contract: parse_listen_address accepts "HOST:PORT" with HOST an IPv4 address, a host name,
// or an IPv6 address in brackets ("[::1]:8080"), and PORT 0..65535 (0: the system picks a free
// port, which `serve` then prints). It does not resolve names. Errors: invalid_input naming
// the text. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/common/result.h"

namespace megatts {

struct listen_address {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8080;
    friend bool operator==(const listen_address&, const listen_address&) = default;
};

result<listen_address> parse_listen_address(std::string_view text);

}  // namespace megatts

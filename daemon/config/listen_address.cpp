#include "daemon/config/listen_address.h"

#include <charconv>

namespace megatts {

result<listen_address> parse_listen_address(std::string_view text) {
    auto bad = [&](std::string_view why) {
        return make_error(error_kind::invalid_input,
                          "listen address '" + std::string(text) + "': " + std::string(why));
    };
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("expected HOST:PORT");
    std::string_view host = text.substr(0, colon);
    const std::string_view port_text = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string_view::npos) {
        return bad("an IPv6 address needs brackets, as in [::1]:8080");
    }
    if (host.empty()) return bad("empty host");
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
        return bad("port must be a number in 0..65535");
    return listen_address{std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace megatts

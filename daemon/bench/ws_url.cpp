#include "daemon/bench/ws_url.h"

#include <charconv>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace megatts::bench {

result<ws_url> parse_ws_url(const std::string& url) {
    constexpr std::string_view scheme = "ws://";
    if (!url.starts_with(scheme))
        return make_error(error_kind::invalid_input, "--url " + url + ": must start with ws:// (wss is not supported)");
    std::string_view rest = std::string_view(url).substr(scheme.size());
    const auto slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    ws_url out;
    if (slash != std::string_view::npos) out.path = std::string(rest.substr(slash));
    std::string_view port_text;
    if (authority.starts_with('[')) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return make_error(error_kind::invalid_input, "--url " + url + ": unclosed [");
        out.host = std::string(authority.substr(1, close - 1));
        const auto after = authority.substr(close + 1);
        if (!after.empty() && !after.starts_with(':'))
            return make_error(error_kind::invalid_input, "--url " + url + ": expected :PORT after ]");
        if (!after.empty()) port_text = after.substr(1);
    } else {
        const auto colon = authority.rfind(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (out.host.empty()) return make_error(error_kind::invalid_input, "--url " + url + ": no host");
    if (!port_text.empty() || authority.ends_with(':')) {
        unsigned port = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc{} || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
            return make_error(error_kind::invalid_input, "--url " + url + ": the port must be in 1..65535");
        out.port = static_cast<std::uint16_t>(port);
    }
    return out;
}

result<std::string> resolve_host(const std::string& host) {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::resolver resolver(ioc);
    boost::system::error_code ec;
    const auto results = resolver.resolve(host, "", ec);
    if (ec || results.empty()) return make_error(error_kind::not_found, "host " + host + ": " + ec.message());
    return results.begin()->endpoint().address().to_string();
}

}  // namespace megatts::bench

#include "daemon/server/server_metrics.h"

#include <string>

namespace megatts {
namespace {

// Close codes the server sends (PROTOCOL.md §6); anything else counts as "other".
constexpr std::array<std::uint16_t, 7> close_codes = {
    close_code::normal,          close_code::going_away,     close_code::invalid_payload, close_code::policy,
    close_code::message_too_big, close_code::internal_error, close_code::try_again_later};

constexpr std::array<std::string_view, k_http_route_count> route_names = {
    "static", "speech", "voices", "healthz", "readyz", "metrics", "websocket", "other"};

}  // namespace

result<server_metrics> server_metrics::create(metrics_registry& registry) {
    server_metrics m;
    auto connections = registry.add_gauge("megatts_websocket_connections", "Open WebSocket connections.");
    if (!connections) return connections.err();
    m.connections_ = *connections;
    for (int i = 0; i < k_error_code_count; ++i) {
        const auto name = std::string(error_code_name(static_cast<error_code>(i)));
        auto c = registry.add_counter("megatts_protocol_errors_total",
                                      "Errors answered to clients (WebSocket error events, HTTP errors), by code.",
                                      {{"code", name}});
        if (!c) return c.err();
        m.errors_[static_cast<std::size_t>(i)] = *c;
    }
    for (std::size_t i = 0; i <= close_codes.size(); ++i) {
        const auto label = i < close_codes.size() ? std::to_string(close_codes[i]) : std::string("other");
        auto c = registry.add_counter("megatts_websocket_closes_total",
                                      "WebSocket connections closed by the server, by close code.", {{"code", label}});
        if (!c) return c.err();
        m.closes_[i] = *c;
    }
    for (std::size_t i = 0; i < route_names.size(); ++i) {
        auto c = registry.add_counter("megatts_http_requests_total", "HTTP requests, by route.",
                                      {{"route", std::string(route_names[i])}});
        if (!c) return c.err();
        m.requests_[i] = *c;
    }
    return m;
}

void server_metrics::server_close(std::uint16_t code) {
    std::size_t i = 0;
    while (i < close_codes.size() && close_codes[i] != code) ++i;
    closes_[i]->add();
}

}  // namespace megatts

// server_metrics: the server's own metrics, next to the pipeline's on the one registry that
// /metrics renders:
//   megatts_websocket_connections          gauge    open WebSocket connections
//   megatts_protocol_errors_total{code}    counter  error events and HTTP errors by error_code name
//   megatts_websocket_closes_total{code}   counter  connections closed by the server, by close code
//   megatts_http_requests_total{route}     counter  HTTP requests by route (static, speech, ...)
//
// Contract: create() registers every series once, so that /metrics shows zeros rather than
// nothing. Updates are lock-free from any thread. Errors: create() passes on the registry's.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "daemon/protocol/error_code.h"
#include "kernels/common/result.h"
#include "pipeline/telemetry/metrics_registry.h"

namespace megatts {

enum class http_route { static_file, speech, voices, health, ready, metrics, websocket, other };
inline constexpr int k_http_route_count = 8;

class server_metrics {
public:
    static result<server_metrics> create(metrics_registry& registry);

    void connection_opened() { connections_->add(1); }
    void connection_closed() { connections_->add(-1); }
    void protocol_error(error_code code) { errors_[static_cast<std::size_t>(code)]->add(); }
    void server_close(std::uint16_t close_code);
    void request(http_route route) { requests_[static_cast<std::size_t>(route)]->add(); }

private:
    server_metrics() = default;

    gauge* connections_ = nullptr;
    std::array<counter*, k_error_code_count> errors_{};
    std::array<counter*, 8> closes_{};  // by the close codes of PROTOCOL.md §6, the last one "other"
    std::array<counter*, k_http_route_count> requests_{};
};

}  // namespace megatts

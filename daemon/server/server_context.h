// server_context: what every connection of one `megatts serve` process shares: the
// configuration, the model's service once it exists, the metrics, the readiness phase, and the
// registry of live WebSocket sessions for draining.
//
// Contract: created before the listener; outlives every connection (the server joins its
// threads before destroying it). The service is published once, atomically, when the model
// has loaded; everything else is immutable after construction, atomic, or (the failure
// reason) under a mutex. Thread: any.
//
// Phases: loading -> warming_up -> ready -> draining, and failed from any of them when the
// engine failed (set_failed): failed is final (a drain that follows keeps it), /healthz and
// /readyz answer 503 naming the reason, and no session is admitted.
#pragma once

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>

#include "daemon/config/server_config.h"
#include "daemon/protocol/server_event.h"
#include "daemon/server/server_metrics.h"
#include "daemon/server/session_registry.h"
#include "pipeline/session/tts_service.h"
#include "pipeline/telemetry/metrics_registry.h"

namespace megatts {

enum class server_phase { loading, warming_up, ready, draining, failed };

std::string_view server_phase_name(server_phase phase);

struct model_description {
    std::string name;  // the checkpoint directory's name
    bool synthetic = false;
};

class server_context {
public:
    server_context(server_config config, std::filesystem::path canonical_web_root, model_description model,
                   metrics_registry& registry, server_metrics metrics);

    const server_config& config() const { return config_; }
    const std::filesystem::path& web_root() const { return web_root_; }
    metrics_registry& registry() { return registry_; }
    server_metrics& metrics() { return metrics_; }
    session_registry& sessions() { return sessions_; }

    server_phase phase() const { return phase_.load(std::memory_order_acquire); }
    // The service while warming up or ready (it takes sessions); nullptr while loading or draining.
    tts_service* service_if_accepting() const;
    // The service in any phase after loading (the voice list needs no admission).
    tts_service* service_if_loaded() const;
    const model_description& model() const { return model_; }

    // Start-up, in this order, from the thread that runs it. Each returns false, changing
    // nothing, when a drain began meanwhile (a signal during loading or warm-up).
    bool set_service(tts_service& service);
    bool set_ready();
    // Any phase but failed becomes draining.
    void set_draining();
    // The engine failed for `reason`: final.
    void set_failed(const std::string& reason);
    std::string failure() const;  // empty unless failed

    // The ready event every WebSocket connection starts with (PROTOCOL.md §4.1).
    ready_event make_ready_event() const;
    // The voice of a request that names none: "ryan" (as `megatts say`) if the model has it,
    // else its first voice in name order.
    std::string default_voice() const;

private:
    server_config config_;
    std::filesystem::path web_root_;
    metrics_registry& registry_;
    server_metrics metrics_;
    session_registry sessions_;
    model_description model_;
    std::atomic<tts_service*> service_{nullptr};
    std::atomic<server_phase> phase_{server_phase::loading};
    mutable std::mutex failure_mutex_;
    std::string failure_;
};

}  // namespace megatts

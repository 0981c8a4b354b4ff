// session_hub: what a tts_service's sessions share: the model, the engine thread, the metrics,
// the limits, and admission (a bounded count of open sessions).
//
// Contract: created by tts_service::create(); outlives every session (see tts_service.h).
// Keeps up to 64 idle Opus encoders for the sessions' next streams.
// open() and release() from any thread (an atomic count and a mutex around the list of live
// sessions, kept so the destructor can close those still open and an engine failure can reach
// every one). The accessors are read-only views, safe from any thread. When the engine fails,
// every live session is told (session_core::engine_failed) before the service config's
// on_engine_failure runs, both on the engine thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/opus_encoder_pool.h"
#include "pipeline/engine/engine.h"
#include "pipeline/graph/strand.h"
#include "pipeline/session/session_result.h"
#include "pipeline/session/tts_service.h"
#include "pipeline/session/tts_session.h"
#include "pipeline/telemetry/pipeline_metrics.h"

namespace megatts {

class session_core;

class session_hub {
public:
    static result<std::unique_ptr<session_hub>> create(const reference_model& model,
                                                       std::unique_ptr<engine_backend> backend,
                                                       metrics_registry& registry, const tts_service_config& config);
    ~session_hub();
    session_hub(const session_hub&) = delete;
    session_hub& operator=(const session_hub&) = delete;

    session_result<std::shared_ptr<tts_session>> open(std::shared_ptr<strand> on,
                                                      std::shared_ptr<session_events> events);
    // A session closed: its admission slot is free.
    void release();

    const reference_model& model() const { return model_; }
    engine& model_engine() { return *engine_; }
    const pipeline_metrics& metrics() const { return metrics_; }
    const session_limits& limits() const { return config_.session; }
    int open_sessions() const { return open_.load(); }
    // The Opus encoders the sessions' streams take and give back (opus_encoder_pool.h).
    const std::shared_ptr<opus_encoder_pool>& opus_encoders() const { return opus_encoders_; }

private:
    session_hub(const reference_model& model, const tts_service_config& config, pipeline_metrics metrics);

    void engine_failed(const std::string& reason);

    const reference_model& model_;
    const tts_service_config config_;
    const pipeline_metrics metrics_;
    std::atomic<int> open_{0};
    std::atomic<std::uint64_t> next_id_{1};
    std::mutex mutex_;
    std::vector<std::weak_ptr<session_core>> live_;  // pruned at each open(): at most max_sessions + closed ones
    std::shared_ptr<opus_encoder_pool> opus_encoders_;
    // Last: its thread (which may call engine_failed()) stops before the members above go.
    std::unique_ptr<engine> engine_;
};

}  // namespace megatts

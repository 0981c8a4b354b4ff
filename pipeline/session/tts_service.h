// tts_service: the model, the engine thread that owns its backend, and admission of sessions.
// The daemon creates one per process (per GPU) and opens a session per connection or request.
//
// Contract: create() starts the engine thread (one for all sessions, DESIGN.md §1) on the
// given backend (pipeline/engine: reference_backend.h, cuda_backend.h) and registers the
// pipeline's metrics on `registry`; the model and the registry must outlive the service.
// open_session() may be called from any thread; it fails with too_many_sessions when
// max_sessions sessions are open (the daemon answers 1013 / 503). An utterance that finds every
// engine slot taken fails with engine_full (the same answer); when the engine fails, every
// session gets engine_failed and then config.on_engine_failure runs (on the engine thread). Each session runs its stages
// and delivers its events on the strand it is given (the daemon passes the connection's
// strand, so events arrive where the connection's handlers run). The destructor cancels
// every session still open, stops the engine thread and joins it; sessions must not be used
// after that. Errors: create() fails with invalid_input for limits out of range.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "kernels/common/result.h"
#include "pipeline/engine/engine.h"
#include "pipeline/graph/strand.h"
#include "pipeline/session/session_limits.h"
#include "pipeline/session/session_result.h"
#include "pipeline/session/tts_session.h"
#include "pipeline/synthesis/reference_model.h"
#include "pipeline/telemetry/metrics_registry.h"

namespace megatts {

class session_hub;

struct tts_service_config {
    int max_sessions = 16;  // open sessions (>= 1)
    session_limits session;
    engine_settings engine;
    std::function<void(const std::string& reason)> on_engine_failure;  // may be empty
};

class tts_service {
public:
    static result<std::unique_ptr<tts_service>> create(const reference_model& model,
                                                       std::unique_ptr<engine_backend> backend,
                                                       metrics_registry& registry, const tts_service_config& config);
    ~tts_service();
    tts_service(const tts_service&) = delete;
    tts_service& operator=(const tts_service&) = delete;

    session_result<std::shared_ptr<tts_session>> open_session(std::shared_ptr<strand> on,
                                                              std::shared_ptr<session_events> events);

    int open_sessions() const;
    const model_config& config() const;  // voices and languages for /v1/voices
    // How long the engine has been in its current unit of work (engine::busy_for); the
    // daemon's watchdog reads it.
    std::chrono::steady_clock::duration engine_busy_for() const;

private:
    explicit tts_service(std::unique_ptr<session_hub> hub);

    std::unique_ptr<session_hub> hub_;
};

}  // namespace megatts

#include "pipeline/session/session_hub.h"

#include <algorithm>
#include <string>
#include <utility>

#include "pipeline/session/session_core.h"

namespace megatts {
namespace {

// Idle Opus encoders kept for the next streams (43 KB each): enough for the utterances that
// start within one utterance's length at a busy server's rate; more are created when needed.
constexpr std::size_t k_idle_opus_encoders = 64;

}  // namespace

result<std::unique_ptr<session_hub>> session_hub::create(const reference_model& model,
                                                         std::unique_ptr<engine_backend> backend,
                                                         metrics_registry& registry, const tts_service_config& config) {
    const auto& l = config.session;
    auto bad = [](const std::string& what) { return make_error(error_kind::invalid_input, what); };
    if (config.max_sessions < 1) return bad("max_sessions must be >= 1");
    if (l.max_text_bytes < 1) return bad("max_text_bytes must be >= 1");
    if (l.max_queued_utterances < 0) return bad("max_queued_utterances must be >= 0");
    if (l.input_queue_frames < 4) return bad("input_queue_frames must be >= 4");
    if (l.soft_queue_ms < 80) return bad("soft_queue_ms must be >= 80 (one frame)");
    if (config.engine.lead_limit.count() < 0 || config.engine.first_audio_yield.count() < 0 ||
        config.engine.choice_margin.count() < 0)
        return bad("the engine's lead limit, first-audio yield and choice margin must be >= 0");
    auto metrics = pipeline_metrics::create(registry);
    if (!metrics) return metrics.err();
    std::unique_ptr<session_hub> hub(new session_hub(model, config, metrics.value()));
    auto* raw = hub.get();
    auto e = engine::create(model, std::move(backend), config.engine, hub->metrics_,
                            {.on_failure = [raw](const std::string& reason) { raw->engine_failed(reason); }});
    if (!e) return e.err();
    hub->engine_ = std::move(e.value());
    return hub;
}

session_hub::session_hub(const reference_model& model, const tts_service_config& config, pipeline_metrics metrics)
    : model_(model),
      config_(config),
      metrics_(metrics),
      opus_encoders_(std::make_shared<opus_encoder_pool>(k_idle_opus_encoders)) {}

session_hub::~session_hub() {
    std::vector<std::weak_ptr<session_core>> live;
    {
        std::lock_guard lock(mutex_);
        live.swap(live_);
    }
    for (auto& weak : live) {
        if (auto core = weak.lock()) core->close();
    }
}

session_result<std::shared_ptr<tts_session>> session_hub::open(std::shared_ptr<strand> on,
                                                               std::shared_ptr<session_events> events) {
    int open = open_.load();
    do {
        if (open >= config_.max_sessions) {
            metrics_.count_error(session_errc::too_many_sessions);
            return session_error{session_errc::too_many_sessions,
                                 "the server is at its limit of " + std::to_string(config_.max_sessions) + " sessions"};
        }
    } while (!open_.compare_exchange_weak(open, open + 1));
    metrics_.sessions->add(1);
    auto core = std::make_shared<session_core>(next_id_++, *this, std::move(on), std::move(events));
    {
        std::lock_guard lock(mutex_);
        std::erase_if(live_, [](const auto& weak) { return weak.expired(); });
        live_.push_back(core);
    }
    return std::make_shared<tts_session>(std::move(core));
}

void session_hub::engine_failed(const std::string& reason) {
    std::vector<std::weak_ptr<session_core>> live;
    {
        std::lock_guard lock(mutex_);
        live = live_;
    }
    const std::string message = engine_failure_message(reason);
    for (auto& weak : live) {
        if (auto core = weak.lock()) core->engine_failed(message);
    }
    if (config_.on_engine_failure) config_.on_engine_failure(reason);
}

void session_hub::release() {
    open_.fetch_sub(1);
    metrics_.sessions->add(-1);
}

}  // namespace megatts

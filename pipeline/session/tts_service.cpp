#include "pipeline/session/tts_service.h"

#include <utility>

#include "pipeline/session/session_hub.h"

namespace megatts {

result<std::unique_ptr<tts_service>> tts_service::create(const reference_model& model,
                                                         std::unique_ptr<engine_backend> backend,
                                                         metrics_registry& registry, const tts_service_config& config) {
    auto hub = session_hub::create(model, std::move(backend), registry, config);
    if (!hub) return hub.err();
    return std::unique_ptr<tts_service>(new tts_service(std::move(hub.value())));
}

tts_service::tts_service(std::unique_ptr<session_hub> hub) : hub_(std::move(hub)) {}

tts_service::~tts_service() = default;

session_result<std::shared_ptr<tts_session>> tts_service::open_session(std::shared_ptr<strand> on,
                                                                       std::shared_ptr<session_events> events) {
    return hub_->open(std::move(on), std::move(events));
}

int tts_service::open_sessions() const { return hub_->open_sessions(); }

const model_config& tts_service::config() const { return hub_->model().config(); }

std::chrono::steady_clock::duration tts_service::engine_busy_for() const { return hub_->model_engine().busy_for(); }

}  // namespace megatts

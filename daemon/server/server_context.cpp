#include "daemon/server/server_context.h"

#include "daemon/protocol/protocol_version.h"

namespace megatts {

std::string_view server_phase_name(server_phase phase) {
    switch (phase) {
    case server_phase::loading: return "loading";
    case server_phase::warming_up: return "warming_up";
    case server_phase::ready: return "ready";
    case server_phase::draining: return "draining";
    case server_phase::failed: return "failed";
    }
    return "loading";
}

server_context::server_context(server_config config, std::filesystem::path canonical_web_root,
                               model_description model, metrics_registry& registry, server_metrics metrics)
    : config_(std::move(config)),
      web_root_(std::move(canonical_web_root)),
      registry_(registry),
      metrics_(metrics),
      model_(std::move(model)) {}

tts_service* server_context::service_if_accepting() const {
    const auto p = phase();
    return p == server_phase::warming_up || p == server_phase::ready ? service_if_loaded() : nullptr;
}

tts_service* server_context::service_if_loaded() const { return service_.load(std::memory_order_acquire); }

bool server_context::set_service(tts_service& service) {
    service_.store(&service, std::memory_order_release);
    auto expected = server_phase::loading;
    return phase_.compare_exchange_strong(expected, server_phase::warming_up, std::memory_order_acq_rel);
}

bool server_context::set_ready() {
    auto expected = server_phase::warming_up;
    return phase_.compare_exchange_strong(expected, server_phase::ready, std::memory_order_acq_rel);
}

void server_context::set_draining() {
    auto phase = this->phase();
    while (phase != server_phase::failed &&
           !phase_.compare_exchange_weak(phase, server_phase::draining, std::memory_order_acq_rel)) {
    }
}

void server_context::set_failed(const std::string& reason) {
    {
        std::lock_guard lock(failure_mutex_);
        failure_ = reason;
    }
    phase_.store(server_phase::failed, std::memory_order_release);
}

std::string server_context::failure() const {
    std::lock_guard lock(failure_mutex_);
    return failure_;
}

std::string server_context::default_voice() const {
    // `megatts say`'s default when the model has it, so that both commands agree.
    constexpr std::string_view preferred = "ryan";
    const auto* service = service_if_loaded();
    if (!service || service->config().speakers.empty()) return std::string(preferred);
    const auto& speakers = service->config().speakers;
    return speakers.contains(std::string(preferred)) ? std::string(preferred) : speakers.begin()->first;
}

ready_event server_context::make_ready_event() const {
    ready_event e;
    e.protocol = std::string(protocol_version);
    e.server = "megatts " MEGATTS_VERSION;
    e.model = model_.name;
    e.synthetic = model_.synthetic;
    if (const auto* service = service_if_loaded()) {
        const auto& model = service->config();
        for (const auto& [voice, id] : model.speakers) e.voices.push_back(voice);
        e.languages.push_back("auto");
        for (const auto& [language, id] : model.languages) e.languages.push_back(language);
        e.defaults.temperature = model.sampling.temperature;
        e.defaults.top_k = model.sampling.top_k;
        e.defaults.top_p = model.sampling.top_p;
    }
    e.defaults.voice = default_voice();
    e.defaults.opus_frame_ms = config_.opus.frame_ms;
    const auto& l = config_.limits;
    const auto& q = config_.send_queue;
    e.limits = {.max_text_bytes = l.max_text_bytes,
                .max_message_bytes = l.max_message_bytes,
                .queued_utterances = l.queued_utterances,
                .send_queue_soft_ms = q.soft_ms,
                .send_queue_hard_ms = q.hard_ms,
                .stall_timeout_ms = q.stall_timeout_ms,
                .idle_timeout_s = l.idle_timeout_s,
                .keepalive_timeout_s = l.keepalive_timeout_s,
                .max_errors = l.max_errors};
    return e;
}

}  // namespace megatts

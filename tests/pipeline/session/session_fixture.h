// A tts_service on the tiny checkpoint (the CPU reference backend unless a test brings its
// own), a thread pool for the strands, and one recorded session. Members are declared so that
// destruction closes the session, drains the pool, then stops the service (tts_service.h's
// order).
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "pipeline/engine/reference_backend.h"
#include "pipeline/graph/thread_pool.h"
#include "pipeline/session/tts_service.h"
#include "tests/pipeline/engine/tiny_model.h"
#include "tests/pipeline/session/recording_events.h"

namespace megatts::test {

inline tts_service_config small_config() {
    tts_service_config c;
    c.max_sessions = 2;
    c.session.max_text_bytes = 256;
    c.session.max_queued_utterances = 2;
    c.session.input_queue_frames = 64;
    c.session.soft_queue_ms = 300;
    // The recorded transport plays nothing in real time: no pacing.
    c.engine.lead_limit = std::chrono::milliseconds(0);
    return c;
}

struct session_fixture {
    explicit session_fixture(tts_service_config config = small_config(), std::unique_ptr<engine_backend> backend = {})
        : service(tts_service::create(tiny_model(),
                                      backend ? std::move(backend)
                                              : make_reference_backend(tiny_model(), config.max_sessions, 0),
                                      registry, config)
                      .value()) {
        auto opened = service->open_session(on, events);
        REQUIRE(opened.ok());
        session = std::move(opened.value());
        events->session = session.get();
    }

    metrics_registry registry;
    std::unique_ptr<tts_service> service;
    thread_pool pool{2};
    std::shared_ptr<strand> on = pool.make_strand();  // the session's strand
    std::shared_ptr<recording_events> events = std::make_shared<recording_events>();
    std::shared_ptr<tts_session> session;
};

inline utterance_options pcm_options(std::uint64_t seed, int rate = 24000) {
    utterance_options o;
    o.voice = "ryan";
    o.language = "english";
    o.sampling.seed = seed;
    o.format = audio_format::pcm16;
    o.sample_rate = rate;
    return o;
}


}  // namespace megatts::test

// gpu suite: the engine's step spans on the cuda backend: every step of a traced utterance has
// the frame launch's device time (CUDA events mapped onto the host clock) inside the host's
// span of its generate() call, the steps' device spans follow one another, and the first
// frame's TTFA marks are the first launch's device end. Prints how much of generate() the
// launch itself is (the rest: text-track uploads, the launch's own set-up, the sync).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "pipeline/engine/cuda_backend.h"
#include "pipeline/engine/engine.h"
#include "pipeline/stages/chat_template.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "tests/pipeline/engine/recording_client.h"
#include "tests/support/gpu_model.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;

double us(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

TEST_CASE("a traced utterance's steps carry the frame launch's device span inside generate()", "[gpu][engine][trace]") {
    auto model = reference_model::load(test::gpu_model_dir());
    REQUIRE(model.ok());
    metrics_registry registry;
    auto metrics = pipeline_metrics::create(registry).value();
    auto backend = make_cuda_backend(*model, 2, 1024);
    INFO((backend ? "" : backend.err().message));
    REQUIRE(backend.ok());
    auto e = engine::create(*model, std::move(*backend), {.lead_limit = 0ms, .first_audio_yield = 0ms}, metrics);
    REQUIRE(e.ok());

    constexpr int k_frames = 8;
    test::frame_log log;
    auto client = std::make_shared<test::recording_client>(1, log);
    engine_request request{"ryan", "english", {.greedy = true}, text_layout::non_streaming, k_frames, false, true};
    auto job = std::make_shared<engine_job>(frame_header{1, 0, 1, {}}, request, client);
    auto ids = model->tokenizer.encode(std::string(k_template_head) + "Hello there, how are you today?" +
                                       std::string(k_template_tail));
    REQUIRE(ids.ok());
    job->add_ids(*ids, true);
    REQUIRE((*e)->submit(job) == engine::admission::accepted);
    REQUIRE(client->wait([](auto& x) { return x.end.has_value() || x.error.has_value(); }));
    REQUIRE_FALSE(client->error.has_value());

    REQUIRE(client->steps.size() == static_cast<std::size_t>(client->frames));
    double launch_us = 0, call_us = 0;
    for (std::size_t i = 0; i < client->steps.size(); ++i) {
        const auto& s = *client->steps[i];
        INFO("step " << i);
        REQUIRE(s.generate.device);
        CHECK(s.generate.device->begin >= s.generate.host.begin);
        CHECK(s.generate.device->end <= s.generate.host.end);
        CHECK(s.generate.device->end > s.generate.device->begin);
        if (i > 0) CHECK(s.generate.device->begin >= client->steps[i - 1]->generate.device->end);
        if (i > 0) CHECK(s.rows == 1);
        CHECK(s.prefill == (i == 0 ? 1 : 0));
        launch_us += us(s.generate.device->end - s.generate.device->begin);
        call_us += us(s.generate.host.end - s.generate.host.begin);
    }
    CHECK(client->steps.front()->rows > 1);  // the prompt's rows ran in the first launch
    CHECK(*client->marks.at(ttfa_mark::first_frame) == client->steps.front()->generate.device->end);
    std::printf("engine steps on the cuda backend: frame launch %.1f us of generate() %.1f us (mean of %zu)\n",
                launch_us / static_cast<double>(client->steps.size()), call_us / static_cast<double>(client->steps.size()),
                client->steps.size());
}

}  // namespace
}  // namespace megatts

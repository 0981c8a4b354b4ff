// The engine's step spans and the TTFA marks it takes from them: a traced job's codec frames
// carry the steps that made them (batch, rows, the calls' host and device spans), at most
// k_traced_steps of them; an untraced job's carry none; the marks of the first frame are the
// device's times where the backend measured them, clamped into the call when the mapping puts
// them outside it, and the host's otherwise.
#include "pipeline/engine/engine.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "pipeline/stages/chat_template.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "tests/pipeline/engine/fake_backend.h"
#include "tests/pipeline/engine/recording_client.h"
#include "tests/pipeline/engine/tiny_model.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;
using test::fake_backend;
using test::fake_faults;
using test::frame_log;
using test::recording_client;
using test::tiny_model;

// Long enough that the runaway guard stops no job before 80 frames.
const std::string k_text =
    "Hello there, how are you today? I am fine, thank you, and I hope the weather stays this kind for a while.";

struct trace_fixture {
    explicit trace_fixture(fake_faults faults) {
        e = engine::create(tiny_model(), std::make_unique<fake_backend>(backend_limits{.slots = 2, .max_batch = 2}, state, faults),
                           {.lead_limit = 0ms}, metrics)
                .value();
    }

    std::shared_ptr<recording_client> run(std::uint64_t seed, int max_frames, bool trace) {
        auto c = std::make_shared<recording_client>(seed, log);
        engine_request request{"ryan", "english", {.seed = seed}, text_layout::non_streaming, max_frames, false, trace};
        auto j = std::make_shared<engine_job>(frame_header{seed, 0, 1, {}}, request, c);
        auto ids = tiny_model().tokenizer.encode(std::string(k_template_head) + k_text + std::string(k_template_tail));
        REQUIRE(ids.ok());
        j->add_ids(*ids, true);
        REQUIRE(e->submit(j) == engine::admission::accepted);
        REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));
        return c;
    }

    metrics_registry registry;
    pipeline_metrics metrics = pipeline_metrics::create(registry).value();
    std::shared_ptr<fake_backend::shared_state> state = std::make_shared<fake_backend::shared_state>();
    frame_log log;
    std::unique_ptr<engine> e;  // last: its thread stops first
};

TEST_CASE("a traced job's frames carry their steps, in order, the first k_traced_steps only", "[engine][trace]") {
    trace_fixture f({.device = true});
    const int frames = k_traced_steps + 16;
    auto c = f.run(1, frames, true);
    REQUIRE(c->frames == frames);
    REQUIRE(c->steps.size() == static_cast<std::size_t>(k_traced_steps));
    int overlapped = 0;
    for (std::size_t i = 0; i < c->steps.size(); ++i) {
        const auto& s = *c->steps[i];
        if (i > 0) {
            // The last step's audio, started before this step's generate(), is delivered by the
            // end of it (during it, where this step follows at once).
            const auto& last = *c->steps[i - 1];
            CHECK(s.step > last.step);
            CHECK(s.generate.host.begin >= last.vocode.host.begin);
            CHECK(last.vocode.host.end <= s.generate.host.end);
            overlapped += s.generate.host.begin < last.vocode.host.end ? 1 : 0;
        }
        CHECK(s.generate.items == 1);
        CHECK(s.rows == 1);     // the fake prefills in open(), as the reference backend
        CHECK(s.prefill == 0);
        CHECK(s.generate.host.begin <= s.generate.host.end);
        CHECK(s.generate.host.end <= s.vocode.host.begin);
        CHECK(s.vocode.host.begin <= s.vocode.host.end);
        CHECK(s.vocode.items == 1);
        REQUIRE(s.generate.device);
        CHECK(s.generate.device->begin >= s.generate.host.begin);
        CHECK(s.generate.device->end <= s.generate.host.end);
        CHECK_FALSE(s.vocode.device);
    }
    INFO(overlapped << " of " << c->steps.size() - 1 << " steps began before the last one's audio was delivered");
    CHECK(overlapped > 0);
    // The first frame's marks: the device's end of generate(), the host's end of its audio.
    const auto& first = *c->steps.front();
    CHECK(*c->marks.at(ttfa_mark::first_code0) == first.generate.device->end);
    CHECK(*c->marks.at(ttfa_mark::first_frame) == first.generate.device->end);
    CHECK(*c->marks.at(ttfa_mark::first_pcm) == first.vocode.host.end);
}

TEST_CASE("megatts_engine_gpu_seconds counts the calls whose device time the backend measured", "[engine][trace]") {
    auto count = [](const histogram* h) { return h->snapshot().cumulative.back(); };
    SECTION("generate() measured, vocode() not") {
        trace_fixture f({.device = true});
        auto c = f.run(5, 6, false);
        REQUIRE(c->frames == 6);
        CHECK(count(f.metrics.engine_generate_gpu) == count(f.metrics.engine_generate));
        CHECK(count(f.metrics.engine_generate_gpu) >= 6);
        CHECK(count(f.metrics.engine_vocode_gpu) == 0);
        // Inside the host's time of the same calls.
        CHECK(f.metrics.engine_generate_gpu->snapshot().sum <= f.metrics.engine_generate->snapshot().sum);
    }
    SECTION("nothing measured") {
        trace_fixture f({});
        f.run(6, 6, false);
        CHECK(count(f.metrics.engine_generate) >= 6);
        CHECK(count(f.metrics.engine_generate_gpu) == 0);
    }
}

TEST_CASE("an untraced job's frames carry no steps", "[engine][trace]") {
    trace_fixture f({.device = true});
    auto c = f.run(2, 8, false);
    CHECK(c->frames == 8);
    CHECK(c->steps.empty());
}

TEST_CASE("device times outside the call are clamped into it; without them the marks are the host's", "[engine][trace]") {
    SECTION("device times an hour late") {
        trace_fixture f({.device = true, .device_offset = 1h});
        auto c = f.run(3, 4, true);
        REQUIRE_FALSE(c->steps.empty());
        const auto& s = *c->steps.front();
        REQUIRE(s.generate.device);
        CHECK(s.generate.device->begin == s.generate.host.end);
        CHECK(s.generate.device->end == s.generate.host.end);
        CHECK(*c->marks.at(ttfa_mark::first_frame) == s.generate.host.end);
    }
    SECTION("no device times") {
        trace_fixture f({});
        auto c = f.run(4, 4, true);
        REQUIRE_FALSE(c->steps.empty());
        const auto& s = *c->steps.front();
        CHECK_FALSE(s.generate.device);
        CHECK(*c->marks.at(ttfa_mark::first_code0) == s.generate.host.end);
        CHECK(*c->marks.at(ttfa_mark::first_pcm) == s.vocode.host.end);
    }
}

}  // namespace
}  // namespace megatts

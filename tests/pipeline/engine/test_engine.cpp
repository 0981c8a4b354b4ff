// The engine on the CPU reference backend: frames bit-identical to synthesize(), streaming text
// waits for text, steps serve every job that can go, backpressure and cancel, admission.
#include "pipeline/engine/engine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "pipeline/engine/reference_backend.h"
#include "pipeline/stages/chat_template.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "pipeline/telemetry/ttfa_marks.h"
#include "tests/pipeline/engine/recording_client.h"
#include "tests/pipeline/engine/tiny_model.h"
#include "tests/support/eventually.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;
using test::frame_log;
using test::recording_client;
using test::tiny_model;

// No pacing and no yielding: these tests are about the frames, not the schedule.
constexpr engine_settings k_unpaced{.lead_limit = 0ms, .first_audio_yield = 0ms};

struct engine_fixture {
    explicit engine_fixture(int slots = 4)
        : e(engine::create(tiny_model(), make_reference_backend(tiny_model(), slots, 0), k_unpaced, metrics).value()) {}

    metrics_registry registry;
    pipeline_metrics metrics = pipeline_metrics::create(registry).value();
    std::unique_ptr<engine> e;
    frame_log log;
};

std::vector<std::int32_t> template_ids(const std::string& text) {
    auto ids = tiny_model().tokenizer.encode(std::string(k_template_head) + text + std::string(k_template_tail));
    REQUIRE(ids.ok());
    return ids.value();
}

std::shared_ptr<engine_job> make_job(std::shared_ptr<recording_client> client, std::uint64_t session,
                                     text_layout layout, std::uint64_t seed, int max_frames = 0) {
    engine_request request{"ryan", "english", {.seed = seed}, layout, max_frames};
    return std::make_shared<engine_job>(frame_header{session, client->epoch_.load(), 1, {}}, request, client);
}

utterance_request reference_request(const std::string& text, text_layout layout, std::uint64_t seed,
                                    int max_frames = 0) {
    return {text, "ryan", "english", layout, {.seed = seed}, max_frames};
}

TEST_CASE("engine frames equal synthesize() in the non-streaming layout", "[engine]") {
    engine_fixture f;
    const std::string text = "Hello world, this is a test.";
    auto client = std::make_shared<recording_client>(1, f.log);
    auto job = make_job(client, 1, text_layout::non_streaming, 7);
    job->add_ids(template_ids(text), true);
    REQUIRE(f.e->submit(job) == engine::admission::accepted);
    REQUIRE(client->wait([](auto& c) { return c.end.has_value(); }));

    auto ref = test::synthesize_reference(reference_request(text, text_layout::non_streaming, 7));
    CHECK(client->codes == ref.codes);
    CHECK(client->pcm == ref.pcm);
    CHECK(client->end->frames == ref.summary.frames);
    CHECK(client->end->stop == ref.summary.stop);
    CHECK(client->end->text_tokens == ref.summary.text_tokens);
    CHECK(client->end->samples == static_cast<std::int64_t>(ref.pcm.size()));
    CHECK(client->blocks_tile);
    for (auto mark : {ttfa_mark::admitted, ttfa_mark::prefill_done, ttfa_mark::first_code0, ttfa_mark::first_frame,
                      ttfa_mark::first_pcm}) {
        CHECK(client->marks.at(mark).has_value());
    }
    CHECK(*client->marks.at(ttfa_mark::admitted) <= *client->marks.at(ttfa_mark::prefill_done));
    CHECK(*client->marks.at(ttfa_mark::prefill_done) <= *client->marks.at(ttfa_mark::first_frame));
    CHECK(*client->marks.at(ttfa_mark::first_frame) <= *client->marks.at(ttfa_mark::first_pcm));
}

TEST_CASE("streaming text waits for text instead of reaching EOS early", "[engine]") {
    engine_fixture f;
    const std::string text = "One two three four five six seven eight nine ten.";
    const auto ids = template_ids(text);
    const std::size_t text_tokens = ids.size() - k_template_role_ids - k_template_tail_ids;
    REQUIRE(text_tokens >= 6);

    auto client = std::make_shared<recording_client>(1, f.log);
    auto job = make_job(client, 1, text_layout::streaming, 11);
    // The head and three text tokens: the prompt takes the first, frames 0 and 1 the next two.
    const std::size_t given = k_template_role_ids + 3;
    job->add_ids(std::span(ids).first(given), false);
    REQUIRE(f.e->submit(job) == engine::admission::accepted);
    REQUIRE(client->wait([](auto& c) { return c.frames == 2; }));
    std::this_thread::sleep_for(200ms);  // the engine would have gone on by now if it fed tts_pad
    CHECK(client->frame_count() == 2);
    CHECK_FALSE(client->end.has_value());

    // The rest of the text (the tail included) closes it; then tts_eos, tts_pad, EOS.
    job->add_ids(std::span(ids).subspan(given), true);
    f.e->wake();
    REQUIRE(client->wait([](auto& c) { return c.end.has_value(); }));
    auto ref = test::synthesize_reference(reference_request(text, text_layout::streaming, 11));
    CHECK(client->codes == ref.codes);
    CHECK(client->pcm == ref.pcm);
    CHECK(client->end->layout == text_layout::streaming);
    CHECK(client->end->text_tokens == static_cast<int>(text_tokens));
    CHECK(client->end->frames == ref.summary.frames);
}

TEST_CASE("each step advances every job that can go by one frame, in admission order", "[engine]") {
    engine_fixture f;
    const std::string text = "Round robin across sessions.";
    auto go = std::make_shared<std::atomic<bool>>(false);  // held until all three are admitted
    std::vector<std::shared_ptr<recording_client>> clients;
    for (std::uint64_t s = 1; s <= 3; ++s) {
        auto c = std::make_shared<recording_client>(s, f.log);
        c->ready_ = go;
        auto job = make_job(c, s, text_layout::non_streaming, s, 12);
        job->add_ids(template_ids(text), true);
        REQUIRE(f.e->submit(job) == engine::admission::accepted);
        clients.push_back(c);
    }
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.marks.at(ttfa_mark::prefill_done).has_value(); }));
    *go = true;
    f.e->wake();
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));

    // Step r serves, in admission order (equal leads), every session that still has a frame r.
    std::vector<int> frames;
    for (std::uint64_t s = 1; s <= 3; ++s) {
        auto ref = test::synthesize_reference(reference_request(text, text_layout::non_streaming, s, 12));
        CHECK(clients[s - 1]->codes == ref.codes);
        frames.push_back(ref.summary.frames);
    }
    std::vector<std::uint64_t> expected;
    for (int r = 0; r < 12; ++r) {
        for (std::uint64_t s = 1; s <= 3; ++s) {
            if (r < frames[s - 1]) expected.push_back(s);
        }
    }
    CHECK(f.log.sessions == expected);
    CHECK(std::count(expected.begin(), expected.end(), 1) >= 3);
}

TEST_CASE("a client that is not ready gets no frames; cancel drops the job", "[engine]") {
    engine_fixture f;
    auto client = std::make_shared<recording_client>(1, f.log);
    auto job = make_job(client, 1, text_layout::non_streaming, 3, 200);
    job->add_ids(template_ids("Backpressure."), true);
    REQUIRE(f.e->submit(job) == engine::admission::accepted);
    REQUIRE(client->wait([](auto& c) { return c.frames >= 2; }));
    *client->ready_ = false;
    // A step may be under way when the client turns not ready (under TSan one takes longer than
    // any fixed sleep); once the engine has been told no twice, no frame may follow (the audio
    // in flight at the first no is delivered before the second).
    REQUIRE(test::eventually([&] { return client->refusals_.load() > 1; }));
    const int held = client->frame_count();
    std::this_thread::sleep_for(200ms);
    CHECK(client->frame_count() == held);
    // The engine, with nothing to run, woke the session for the frames it had queued.
    CHECK(client->unwoken() == 0);

    client->epoch_ = 1;  // the session cancelled
    *client->ready_ = true;
    f.e->wake();
    REQUIRE(test::eventually([&] { return f.metrics.engine_active->value() == 0.0; }));
    CHECK(client->frame_count() == held);
    CHECK_FALSE(client->end.has_value());
    // The slot is free again: four new jobs fit.
    for (int i = 0; i < 4; ++i) {
        auto c = std::make_shared<recording_client>(10 + static_cast<std::uint64_t>(i), f.log);
        *c->ready_ = false;
        auto j = make_job(c, 10 + static_cast<std::uint64_t>(i), text_layout::non_streaming, 1);
        j->add_ids(template_ids("x"), true);
        REQUIRE(f.e->submit(j) == engine::admission::accepted);
        c->epoch_ = 1;  // and go away at once
    }
}

TEST_CASE("submit refuses jobs past the backend's slots", "[engine]") {
    engine_fixture f;
    std::vector<std::shared_ptr<recording_client>> clients;
    for (int i = 0; i < 5; ++i) {
        auto c = std::make_shared<recording_client>(1, f.log);
        *c->ready_ = false;
        clients.push_back(c);
        auto j = make_job(c, 1, text_layout::non_streaming, 1);
        j->add_ids(template_ids("Limit."), true);
        CHECK(f.e->submit(j) == (i < 4 ? engine::admission::accepted : engine::admission::full));
    }
    for (auto& c : clients) c->epoch_ = 1;
    f.e->wake();
}

// At the limit, a job its session no longer wants must not hold its slot until the engine's next
// step: the session that cancelled (or a new connection after one that closed) starts its next
// utterance at once. The held job's client is not ready, so the engine sleeps and has not
// dropped it yet when the next job comes.
TEST_CASE("at the slot limit, a job nobody wants any more leaves room for the next at once", "[engine]") {
    engine_fixture f(1);
    auto held = std::make_shared<recording_client>(1, f.log);
    *held->ready_ = false;
    auto job = make_job(held, 1, text_layout::non_streaming, 1, 200);
    job->add_ids(template_ids("Held."), true);
    REQUIRE(f.e->submit(job) == engine::admission::accepted);
    REQUIRE(held->wait([](auto& c) { return c.marks.at(ttfa_mark::prefill_done).has_value(); }));

    auto refused = std::make_shared<recording_client>(2, f.log);
    auto wanted_too = make_job(refused, 2, text_layout::non_streaming, 2, 3);
    wanted_too->add_ids(template_ids("Refused."), true);
    CHECK(f.e->submit(wanted_too) == engine::admission::full);  // the held job is still wanted

    held->epoch_ = 1;  // the session cancelled (a closed session reads the same: session_core::current)
    auto next_client = std::make_shared<recording_client>(3, f.log);
    auto next = make_job(next_client, 3, text_layout::non_streaming, 3, 3);
    next->add_ids(template_ids("Next."), true);
    REQUIRE(f.e->submit(next) == engine::admission::accepted);
    REQUIRE(next_client->wait([](auto& c) { return c.end.has_value(); }));
    CHECK_FALSE(next_client->error.has_value());
    CHECK_FALSE(held->end.has_value());
}

}  // namespace
}  // namespace megatts

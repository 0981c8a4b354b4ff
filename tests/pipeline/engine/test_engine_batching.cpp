// The engine's scheduling on a fake backend (deterministic codes, no model, a record of every
// batch, injectable failures) and a playback clock the test moves by hand: jobs joining and
// leaving mid-batch, the composition and order of each step, first-audio priority, the lead
// limit, cancel under load, admission at the limit, the FAILED path. No timed assertions: a
// test holds jobs back (their clients not ready) to compose a step, and checks what did not
// happen by running another job to its end behind it.
#include "pipeline/engine/engine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
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
using clock = std::chrono::steady_clock;

// A playback clock that stands still until the test advances it.
class manual_clock {
public:
    clock::time_point now() const { return clock::time_point(clock::duration(ticks_.load())); }
    void advance(clock::duration d) { ticks_ += d.count(); }

private:
    std::atomic<clock::rep> ticks_{std::chrono::duration_cast<clock::duration>(1h).count()};
};

const backend_limits k_four{.slots = 4, .max_batch = 4};
// Long enough that the runaway guard (10 frames a token) stops no test's job.
const std::string k_text = "Hello there, how are you today? I am fine, thank you.";

bool admitted(recording_client& c) { return c.marks.at(ttfa_mark::prefill_done).has_value(); }

struct fixture {
    explicit fixture(backend_limits limits = k_four, engine_settings settings = {.lead_limit = 0ms},
                     fake_faults faults = {}) {
        e = engine::create(tiny_model(), std::make_unique<fake_backend>(limits, state, faults), settings, metrics,
                           {.playback_clock = [this] { return playback.now(); },
                            .on_failure =
                                [this](const std::string& reason) {
                                    {
                                        std::lock_guard lock(failure_mutex);
                                        failures.push_back(reason);
                                    }
                                    failed.notify_all();
                                }})
                .value();
    }

    // A held step would keep the engine's thread from stopping.
    ~fixture() { state->allow(-1); }

    std::shared_ptr<recording_client> client(std::uint64_t session) {
        return std::make_shared<recording_client>(session, log);
    }

    // A whole-text job; its seed names it in the fake's codes.
    std::shared_ptr<engine_job> job(const std::shared_ptr<recording_client>& c, std::uint64_t seed, int max_frames,
                                    bool paced = true, const std::string& text = k_text) {
        engine_request request{"ryan", "english", {.seed = seed}, text_layout::non_streaming, max_frames, paced};
        auto j = std::make_shared<engine_job>(frame_header{seed, c->epoch_.load(), 1, {}}, request, c);
        auto ids = tiny_model().tokenizer.encode(std::string(k_template_head) + text + std::string(k_template_tail));
        REQUIRE(ids.ok());
        j->add_ids(*ids, true);
        return j;
    }

    void submit(const std::shared_ptr<engine_job>& j) { REQUIRE(e->submit(j) == engine::admission::accepted); }

    // Jobs with seeds 1..count, admitted and held until `go` is set and the engine woken.
    std::vector<std::shared_ptr<recording_client>> held_jobs(std::uint64_t count, int max_frames,
                                                             const std::shared_ptr<std::atomic<bool>>& go) {
        std::vector<std::shared_ptr<recording_client>> clients;
        for (std::uint64_t s = 1; s <= count; ++s) {
            auto c = client(s);
            c->ready_ = go;
            submit(job(c, s, max_frames));
            clients.push_back(c);
        }
        for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return admitted(x); }));
        return clients;
    }

    // The steps so far, each as (seed, frame) per item in step order.
    std::vector<std::vector<std::pair<std::uint64_t, int>>> steps() {
        std::lock_guard lock(state->mutex);
        std::vector<std::vector<std::pair<std::uint64_t, int>>> out;
        for (const auto& s : state->steps) {
            auto& step = out.emplace_back();
            for (const auto& it : s.items) step.emplace_back(state->seed_of_slot[it.slot], it.frame);
        }
        return out;
    }
    std::size_t step_count() {
        std::lock_guard lock(state->mutex);
        return state->steps.size();
    }

    metrics_registry registry;
    pipeline_metrics metrics = pipeline_metrics::create(registry).value();
    std::shared_ptr<fake_backend::shared_state> state = std::make_shared<fake_backend::shared_state>();
    manual_clock playback;
    std::mutex failure_mutex;
    std::condition_variable failed;  // failures grew
    std::vector<std::string> failures;
    frame_log log;
    std::unique_ptr<engine> e;  // last: its thread stops first
};

// The fake's codes of `frames` frames of the utterance with `seed`, 16 per frame.
std::vector<std::int32_t> expected_codes(std::uint64_t seed, int frames) {
    std::vector<std::int32_t> out;
    for (int f = 0; f < frames; ++f) {
        for (auto code : fake_backend::codes_of(seed, f)) out.push_back(code);
    }
    return out;
}

// Which steps contain `seed`, by index.
std::vector<std::size_t> steps_with(const std::vector<std::vector<std::pair<std::uint64_t, int>>>& steps,
                                    std::uint64_t seed) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (std::any_of(steps[i].begin(), steps[i].end(), [&](const auto& it) { return it.first == seed; }))
            out.push_back(i);
    }
    return out;
}

using step_items = std::vector<std::pair<std::uint64_t, int>>;

TEST_CASE("a job joins the running batch at the next step and leaves it after its last frame", "[engine]") {
    fixture f;
    auto a = f.client(1);
    a->credits_ = 2;  // A stops after two frames, mid-utterance, until B is admitted
    f.submit(f.job(a, 1, 8));
    REQUIRE(a->wait([](auto& c) { return c.frames == 2; }));
    auto b = f.client(2);
    *b->ready_ = false;
    f.submit(f.job(b, 2, 3));
    REQUIRE(b->wait([](auto& c) { return admitted(c); }));
    a->credits_ = -1;
    *b->ready_ = true;
    f.e->wake();
    REQUIRE(a->wait([](auto& c) { return c.end.has_value(); }));
    REQUIRE(b->wait([](auto& c) { return c.end.has_value(); }));
    const int a_frames = 2;

    const auto steps = f.steps();
    const auto with_b = steps_with(steps, 2);
    REQUIRE(with_b.size() == 3);
    // B's first frame runs in the same step as A's next one, ahead of it; then both go on.
    CHECK(steps[with_b[0]] == step_items{{2, 0}, {1, a_frames}});
    CHECK(with_b[1] == with_b[0] + 1);
    CHECK(with_b[2] == with_b[0] + 2);
    // After B's last frame, the steps hold A alone.
    for (std::size_t i = with_b[2] + 1; i < steps.size(); ++i) CHECK(steps[i] == step_items{{1, steps[i][0].second}});
    CHECK(a->codes == expected_codes(1, 8));
    CHECK(b->codes == expected_codes(2, 3));
    CHECK(a->frames_in_order);
    CHECK(a->end->stop == stop_reason::max_frames);
    CHECK(b->end->frames == 3);
    // Each end follows the audio of the job's last frame, which was in flight when A's frame cap
    // ended it (B's EOS-free end too).
    for (const auto& c : {a, b}) {
        CHECK_FALSE(c->data_after_end);
        CHECK(static_cast<std::int64_t>(c->pcm.size()) == c->end->samples);
        CHECK(c->end->samples == static_cast<std::int64_t>(c->end->frames) * fake_backend::k_samples);
    }
    std::lock_guard lock(f.state->mutex);
    CHECK(f.state->released.size() == 2);
}

TEST_CASE("a job submitted while a step's audio is computed joins the next step (late choice)", "[engine]") {
    // Each audio call takes 200 ms, as a GPU's would, and says so: from the second step on, the
    // engine chooses the next step 1 ms (choice_margin) before the audio in flight is due.
    fixture f(k_four, {.lead_limit = 0ms}, {.vocode_time = 200ms});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 4));
    REQUIRE(f.state->wait_vocode_calls(2));  // the second step's audio started
    auto b = f.client(2);
    f.submit(f.job(b, 2, 2));
    REQUIRE(b->wait([](auto& c) { return admitted(c); }));
    CHECK(f.step_count() == 2);  // admitted while the engine waits to choose the third step
    REQUIRE(a->wait([](auto& c) { return c.end.has_value(); }));
    REQUIRE(b->wait([](auto& c) { return c.end.has_value(); }));
    const auto steps = f.steps();
    REQUIRE(steps.size() == 4);
    CHECK(steps[2] == step_items{{2, 0}, {1, 2}});
    CHECK(steps[3] == step_items{{2, 1}, {1, 3}});
    CHECK(a->codes == expected_codes(1, 4));
    CHECK(b->codes == expected_codes(2, 2));
}

TEST_CASE("engine_settings::max_batch caps a step below the backend's batch", "[engine]") {
    fixture f({.slots = 4, .max_batch = 4}, {.lead_limit = 0ms, .first_audio_yield = 500ms, .max_batch = 2});
    auto go = std::make_shared<std::atomic<bool>>(false);
    auto clients = f.held_jobs(3, 3, go);
    *go = true;
    f.e->wake();
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));
    const auto steps = f.steps();
    REQUIRE(steps.size() >= 5);  // 9 frames, two a step
    CHECK(steps[0] == step_items{{1, 0}, {2, 0}});
    for (const auto& step : steps) CHECK(step.size() <= 2);
    // Every step is counted with the jobs it left out: the third at least in the first step.
    const auto left_out = f.metrics.engine_left_out->snapshot();
    CHECK(left_out.cumulative.back() == f.metrics.engine_batch->snapshot().cumulative.back());
    CHECK(left_out.sum >= 1);
    // The engine thread's work between GPU calls: scheduled and delivered once a step, admitted
    // once a wake that brought jobs (the three arrived together or one by one).
    const auto steps_seen = f.metrics.engine_batch->snapshot().cumulative.back();
    CHECK(f.metrics.engine_host_schedule->snapshot().cumulative.back() == steps_seen);
    CHECK(f.metrics.engine_host_deliver->snapshot().cumulative.back() == steps_seen);
    const auto admits = f.metrics.engine_host_admit->snapshot().cumulative.back();
    CHECK(admits >= 1);
    CHECK(admits <= 3);
    for (std::uint64_t s = 1; s <= 3; ++s) CHECK(clients[s - 1]->codes == expected_codes(s, 3));
}

TEST_CASE("each step: first frames first, then the jobs with the least lead, up to max_batch", "[engine]") {
    fixture f({.slots = 4, .max_batch = 2}, {.lead_limit = 0ms, .first_audio_yield = 500ms});
    auto go = std::make_shared<std::atomic<bool>>(false);
    auto clients = f.held_jobs(3, 3, go);
    *go = true;
    f.e->wake();
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));

    // The playback clock stands still, so a job's lead is its audio: 80 ms a frame.
    const auto steps = f.steps();
    REQUIRE(steps.size() >= 4);
    CHECK(steps[0] == step_items{{1, 0}, {2, 0}});
    CHECK(steps[1] == step_items{{3, 0}, {1, 1}});  // C's first frame, then the least lead (ties: arrival)
    CHECK(steps[2] == step_items{{2, 1}, {3, 1}});  // 80 ms each, A at 160
    CHECK(steps[3] == step_items{{1, 2}, {2, 2}});
    for (std::uint64_t s = 1; s <= 3; ++s) CHECK(clients[s - 1]->codes == expected_codes(s, 3));
}

TEST_CASE("a new job's first frame goes ahead of jobs far ahead of playback", "[engine]") {
    fixture f(k_four, {.lead_limit = 0ms, .first_audio_yield = 500ms});
    auto a = f.client(1), b = f.client(2);
    // Eight frames each are 640 ms of audio, and playback has not moved: both far ahead.
    a->credits_ = 8;
    b->credits_ = 8;
    f.submit(f.job(a, 1, 100));
    f.submit(f.job(b, 2, 100));
    REQUIRE(a->wait([](auto& c) { return c.frames == 8; }));
    REQUIRE(b->wait([](auto& c) { return c.frames == 8; }));
    auto c = f.client(3);
    *c->ready_ = false;
    f.submit(f.job(c, 3, 4));
    REQUIRE(c->wait([](auto& x) { return admitted(x); }));
    const auto before = f.step_count();
    const int a_frames = 8, b_frames = 8;
    a->credits_ = -1;
    b->credits_ = -1;
    *c->ready_ = true;
    f.e->wake();
    REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));

    const auto steps = f.steps();
    REQUIRE(steps.size() >= before + 2);
    CHECK(steps[before] == step_items{{3, 0}});  // alone: a small step for the first audio
    CHECK(steps[before + 1] == step_items{{3, 1}, {1, a_frames}, {2, b_frames}});
}

TEST_CASE("a paced job stops at the lead limit until playback catches up; unpaced ones go on", "[engine]") {
    fixture f(k_four, {.lead_limit = 1000ms, .first_audio_yield = 0ms});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 100));
    // Frames go while the lead (80 ms each, playback standing still) is under 1000 ms: 13 of them.
    REQUIRE(a->wait([](auto& c) { return c.frames == 13; }));
    // An unpaced job runs 30 frames (2.4 s) to its end meanwhile, and A gets none.
    auto b = f.client(2);
    f.submit(f.job(b, 2, 30, /*paced=*/false));
    REQUIRE(b->wait([](auto& c) { return c.end.has_value(); }));
    CHECK(b->frames == 30);
    CHECK(a->frame_count() == 13);

    // 400 ms played: the lead is 640 ms, five more frames take it to 1040.
    f.playback.advance(400ms);
    f.e->wake();
    REQUIRE(a->wait([](auto& c) { return c.frames == 18; }));
    auto c = f.client(3);
    f.submit(f.job(c, 3, 5, /*paced=*/false));
    REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(a->frame_count() == 18);
    CHECK(a->codes == expected_codes(1, 18));
    CHECK_FALSE(a->end.has_value());
}

TEST_CASE("a paced job past join_lead calls for no step of its own but joins the steps others call for", "[engine]") {
    fixture f(k_four, {.lead_limit = 1000ms, .first_audio_yield = 0ms, .join_lead = 500ms});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 100));
    // Alone, A steps while its lead (80 ms a frame, playback standing still) is under 500 ms.
    REQUIRE(a->wait([](auto& c) { return c.frames == 7; }));
    auto b = f.client(2);
    f.submit(f.job(b, 2, 3, /*paced=*/false));
    REQUIRE(b->wait([](auto& c) { return c.end.has_value(); }));
    const auto steps = f.steps();
    const auto with_b = steps_with(steps, 2);
    REQUIRE(with_b.size() == 3);
    // A took no eighth frame alone: it joined B's steps from its seventh, under the lead limit.
    CHECK(steps[with_b[0]] == step_items{{2, 0}, {1, 7}});
    CHECK(steps[with_b[2]] == step_items{{2, 2}, {1, 9}});

    // 400 ms played: A's lead is 400 ms, and it calls for steps again until it is 560.
    f.playback.advance(400ms);
    f.e->wake();
    REQUIRE(a->wait([](auto& c) { return c.frames == 12; }));
    auto c = f.client(3);
    f.submit(f.job(c, 3, 1, /*paced=*/false));
    REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));
    // C's one step (it took B's slot, so the fake's log names B's steps after C too) is the last.
    CHECK(f.steps().back() == step_items{{3, 0}, {1, 12}});
    CHECK(a->codes == expected_codes(1, 13));
}

TEST_CASE("cancel under load: the job leaves the batch at the next step, the others go on", "[engine]") {
    fixture f;
    auto go = std::make_shared<std::atomic<bool>>(false);
    auto clients = f.held_jobs(4, 40, go);
    f.state->allow(5);  // five steps, then the sixth waits in the backend with all four in it
    *go = true;
    f.e->wake();
    auto& cancelled = *clients[1];
    REQUIRE(f.state->wait_held());
    // The fifth step's frames were queued without waking their sessions; the sixth step's
    // generate() woke them before it computed (while a GPU would).
    for (const auto& c : clients) CHECK(c->unwoken() == 0);
    cancelled.epoch_ = 1;  // the session cancelled
    const auto at_cancel = f.step_count();
    CHECK(at_cancel == 5);
    f.state->allow(-1);
    f.e->wake();
    for (std::size_t i : {0u, 2u, 3u}) REQUIRE(clients[i]->wait([](auto& c) { return c.end.has_value(); }));

    // The step in flight when it cancelled still holds it; none after that.
    const auto with = steps_with(f.steps(), 2);
    REQUIRE_FALSE(with.empty());
    CHECK(with.back() == at_cancel);
    for (std::size_t i : {0u, 2u, 3u}) {
        CHECK(clients[i]->codes == expected_codes(i + 1, 40));
        CHECK(clients[i]->frames_in_order);
    }
    CHECK_FALSE(cancelled.end.has_value());
    std::lock_guard lock(f.state->mutex);
    CHECK(f.state->released.size() == 4);
}

TEST_CASE("admission: a job past the slots is refused until one frees", "[engine]") {
    fixture f({.slots = 2, .max_batch = 2});
    auto a = f.client(1), b = f.client(2), c = f.client(3);
    *a->ready_ = false;
    *b->ready_ = false;
    f.submit(f.job(a, 1, 2));
    f.submit(f.job(b, 2, 2));
    CHECK(f.e->submit(f.job(c, 3, 2)) == engine::admission::full);
    CHECK(f.e->slots() == 2);
    *a->ready_ = true;
    f.e->wake();
    // A's slot is free before its end is delivered: a session may submit at once.
    REQUIRE(a->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(f.e->submit(f.job(c, 3, 2)) == engine::admission::accepted);
    REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(c->codes == expected_codes(3, 2));
    b->epoch_ = 1;
    f.e->wake();
}

TEST_CASE("a backend failure fails the engine: jobs told, submits refused, the hook runs once", "[engine]") {
    fixture f(k_four, {.lead_limit = 0ms}, {.error_at = 3});
    auto a = f.client(1), b = f.client(2);
    // Both in before any step: otherwise a slow machine may fail the engine on a's steps before
    // b is submitted, and b's submit is (rightly) refused.
    auto go = std::make_shared<std::atomic<bool>>(false);
    a->ready_ = go;
    b->ready_ = go;
    f.submit(f.job(a, 1, 50));
    f.submit(f.job(b, 2, 50));
    *go = true;
    f.e->wake();
    for (auto* c : {a.get(), b.get()}) REQUIRE(c->wait([](auto& x) { return x.error.has_value(); }));
    for (auto* c : {a.get(), b.get()}) {
        CHECK(c->error->code == session_errc::engine_failed);
        CHECK_THAT(c->error->message, Catch::Contains("illegal memory access"));
        CHECK_FALSE(c->end.has_value());
    }
    REQUIRE(f.e->failure().has_value());
    CHECK_THAT(*f.e->failure(), Catch::Contains("fake CUDA error"));
    CHECK(f.e->submit(f.job(f.client(3), 3, 5)) == engine::admission::failed);
    {
        // The engine runs the hook after it has told the jobs, so it may not have run yet.
        std::unique_lock lock(f.failure_mutex);
        REQUIRE(f.failed.wait_for(lock, 20s, [&] { return !f.failures.empty(); }));
        CHECK(f.failures == std::vector<std::string>{*f.e->failure()});
    }
    CHECK(f.metrics.engine_failed->value() == 1.0);
    CHECK(f.metrics.engine_active->value() == 0.0);
}

TEST_CASE("a backend error that leaves it usable ends that step's jobs only", "[engine]") {
    fixture f(k_four, {.lead_limit = 0ms}, {.error_at = 2, .fatal = false});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 10));
    REQUIRE(a->wait([](auto& x) { return x.error.has_value(); }));
    CHECK(a->error->code == session_errc::internal);
    CHECK(a->frame_count() == 1);
    CHECK_FALSE(f.e->failure().has_value());
    auto b = f.client(2);
    f.submit(f.job(b, 2, 4));
    REQUIRE(b->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(b->codes == expected_codes(2, 4));
}

TEST_CASE("a request the backend cannot run is refused alone, with invalid_argument", "[engine]") {
    fixture f;
    auto refused = f.client(1), fine = f.client(2);
    f.submit(f.job(refused, fake_backend::k_refused_seed, 4));
    f.submit(f.job(fine, 2, 4));
    REQUIRE(refused->wait([](auto& x) { return x.error.has_value(); }));
    CHECK(refused->error->code == session_errc::invalid_argument);
    REQUIRE(fine->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(fine->codes == expected_codes(2, 4));
    // Its slot was never taken: all four are free again.
    for (std::uint64_t s = 10; s < 14; ++s) CHECK(f.e->submit(f.job(f.client(s), s, 1)) == engine::admission::accepted);
}

TEST_CASE("EOS from the backend ends the job with stop eos", "[engine]") {
    fixture f(k_four, {.lead_limit = 0ms}, {.eos_frame = 3});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 10));
    REQUIRE(a->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(a->end->stop == stop_reason::eos);
    CHECK(a->end->frames == 3);
    CHECK(a->codes == expected_codes(1, 3));
    CHECK(a->pcm.size() == 3u * fake_backend::k_samples);
    CHECK_FALSE(a->data_after_end);
}

TEST_CASE("a whole text longer than the backend's prompt goes in the streaming layout", "[engine]") {
    fixture f({.slots = 1, .max_batch = 1, .max_prompt_rows = 12});
    const std::string text = "One two three four five six seven eight nine ten.";
    auto ids = tiny_model().tokenizer.encode(std::string(k_template_head) + text + std::string(k_template_tail));
    REQUIRE(ids.ok());
    const std::vector<std::int32_t> text_ids(ids->begin() + k_template_role_ids, ids->end() - k_template_tail_ids);
    REQUIRE(text_ids.size() > 4);
    auto a = f.client(1);
    f.submit(f.job(a, 1, static_cast<int>(text_ids.size()) + 1, true, text));
    REQUIRE(a->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(a->end->layout == text_layout::streaming);
    CHECK(a->end->text_tokens == static_cast<int>(text_ids.size()));

    // The text track carries the text after its first token (which is in the prompt), then tts_eos, then tts_pad.
    std::vector<std::int32_t> fed;
    {
        std::lock_guard lock(f.state->mutex);
        for (const auto& s : f.state->steps) fed.push_back(s.items.at(0).text_id);
    }
    std::vector<std::int32_t> expected(text_ids.begin() + 1, text_ids.end());
    expected.push_back(tiny_model().config().text_ids.tts_eos);
    expected.push_back(tiny_model().config().text_ids.tts_pad);
    CHECK(fed == expected);
}

TEST_CASE("frames stop where the slot's positions end", "[engine]") {
    auto plan = build_prompt(tiny_model().config(),
                             tiny_model().tokenizer.encode(std::string(k_template_head) + k_text +
                                                           std::string(k_template_tail)).value(),
                             "ryan", "english", text_layout::non_streaming);
    REQUIRE(plan.ok());
    const int rows = static_cast<int>(plan->rows.size());
    fixture f({.slots = 1, .max_positions = rows + 5, .max_batch = 1});
    auto a = f.client(1);
    f.submit(f.job(a, 1, 0));
    REQUIRE(a->wait([](auto& x) { return x.end.has_value(); }));
    CHECK(a->end->stop == stop_reason::max_frames);
    CHECK(a->end->frames == 5);
    CHECK(a->pcm.size() == 5u * fake_backend::k_samples);
    CHECK_FALSE(a->data_after_end);
}

}  // namespace
}  // namespace megatts

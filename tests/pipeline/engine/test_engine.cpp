#include "pipeline/engine/engine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "pipeline/stages/chat_template.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "pipeline/telemetry/ttfa_marks.h"
#include "tests/pipeline/engine/tiny_model.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;
using test::tiny_model;

// The sessions in the order the engine delivered their codec frames.
struct frame_log {
    std::mutex mutex;
    std::vector<std::uint64_t> sessions;
};

// Records what the engine delivers, as a session would, with a switch for backpressure.
class recording_client final : public engine_client {
public:
    recording_client(std::uint64_t session, frame_log& log) : session_(session), log_(&log) {}

    bool current(std::uint32_t epoch) const override { return epoch == epoch_.load(); }
    bool ready_for_frame() const override { return ready_->load(); }
    void deliver(frame f) override {
        std::lock_guard lock(mutex_);
        if (auto* c = std::get_if<codec_frame>(&f.payload)) {
            codes.insert(codes.end(), c->codes.begin(), c->codes.begin() + c->groups);
            ++frames;
            std::lock_guard log_lock(log_->mutex);
            log_->sessions.push_back(session_);
        } else if (auto* p = std::get_if<pcm_block>(&f.payload)) {
            if (p->first_sample != static_cast<std::int64_t>(pcm.size())) blocks_tile = false;  // Catch is not thread-safe
            pcm.insert(pcm.end(), p->samples.begin(), p->samples.end());
        } else if (auto* e = std::get_if<end_of_audio>(&f.payload)) {
            end = *e;
            if (on_end) on_end();
        } else if (auto* m = std::get_if<mark_report>(&f.payload)) {
            marks.record(m->mark, f.header.created);
        } else if (auto* r = std::get_if<error_report>(&f.payload)) {
            error = r->error.message;
        }
        changed_.notify_all();
    }

    // Waits until `done` holds (under the lock) or a generous timeout.
    template <class Pred>
    bool wait(Pred done) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, 20s, [&] { return done(*this); });
    }
    int frame_count() {
        std::lock_guard lock(mutex_);
        return frames;
    }

    std::atomic<std::uint32_t> epoch_{0};
    std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(true);

    std::vector<std::int32_t> codes;
    std::vector<float> pcm;
    bool blocks_tile = true;  // every pcm_block starts where the previous one ended
    int frames = 0;
    std::optional<end_of_audio> end;
    std::optional<std::string> error;
    ttfa_marks marks;
    std::function<void()> on_end;  // run on the engine thread when end_of_audio arrives

private:
    std::uint64_t session_;
    frame_log* log_;
    std::mutex mutex_;
    std::condition_variable changed_;
};

struct engine_fixture {
    explicit engine_fixture(int max_jobs = 4) : e(engine::create(tiny_model(), max_jobs, metrics).value()) {}

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
    REQUIRE(f.e->submit(job));
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
    REQUIRE(f.e->submit(job));
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

TEST_CASE("the engine advances active jobs round-robin, one frame each per round", "[engine]") {
    engine_fixture f;
    const std::string text = "Round robin across sessions.";
    auto go = std::make_shared<std::atomic<bool>>(false);  // held until all three are admitted
    std::vector<std::shared_ptr<recording_client>> clients;
    for (std::uint64_t s = 1; s <= 3; ++s) {
        auto c = std::make_shared<recording_client>(s, f.log);
        c->ready_ = go;
        auto job = make_job(c, s, text_layout::non_streaming, s, 12);
        job->add_ids(template_ids(text), true);
        REQUIRE(f.e->submit(job));
        clients.push_back(c);
    }
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.marks.at(ttfa_mark::prefill_done).has_value(); }));
    *go = true;
    f.e->wake();
    for (auto& c : clients) REQUIRE(c->wait([](auto& x) { return x.end.has_value(); }));

    // Round r serves, in admission order, every session that still has a frame r.
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
    REQUIRE(f.e->submit(job));
    REQUIRE(client->wait([](auto& c) { return c.frames >= 2; }));
    *client->ready_ = false;
    std::this_thread::sleep_for(50ms);
    const int held = client->frame_count();
    std::this_thread::sleep_for(200ms);
    CHECK(client->frame_count() == held);

    client->epoch_ = 1;  // the session cancelled
    *client->ready_ = true;
    f.e->wake();
    std::this_thread::sleep_for(200ms);
    CHECK(client->frame_count() == held);
    CHECK_FALSE(client->end.has_value());
    // The slot is free again: four new jobs fit.
    for (int i = 0; i < 4; ++i) {
        auto c = std::make_shared<recording_client>(10 + static_cast<std::uint64_t>(i), f.log);
        *c->ready_ = false;
        auto j = make_job(c, 10 + static_cast<std::uint64_t>(i), text_layout::non_streaming, 1);
        j->add_ids(template_ids("x"), true);
        REQUIRE(f.e->submit(j));
        c->epoch_ = 1;  // and go away at once
    }
}

TEST_CASE("submit refuses jobs past the limit", "[engine]") {
    engine_fixture f;
    std::vector<std::shared_ptr<recording_client>> clients;
    for (int i = 0; i < 5; ++i) {
        auto c = std::make_shared<recording_client>(1, f.log);
        *c->ready_ = false;
        clients.push_back(c);
        auto j = make_job(c, 1, text_layout::non_streaming, 1);
        j->add_ids(template_ids("Limit."), true);
        CHECK(f.e->submit(j) == (i < 4));
    }
    for (auto& c : clients) c->epoch_ = 1;
    f.e->wake();
}

// A session learns that its job ended from the engine and may submit the next one at once,
// while the engine's round is still going: at the limit, the ended job must not hold its place.
TEST_CASE("at the limit, a job submitted as soon as the previous one ended finds room", "[engine]") {
    engine_fixture f(1);
    auto first = std::make_shared<recording_client>(1, f.log);
    auto second = std::make_shared<recording_client>(2, f.log);
    auto next = make_job(second, 2, text_layout::non_streaming, 2, 3);
    next->add_ids(template_ids("Next."), true);
    std::atomic<int> accepted{-1};
    first->on_end = [&] { accepted = f.e->submit(next) ? 1 : 0; };  // on the engine thread, inside its round
    auto job = make_job(first, 1, text_layout::non_streaming, 1, 3);
    job->add_ids(template_ids("First."), true);
    REQUIRE(f.e->submit(job));
    REQUIRE(first->wait([](auto& c) { return c.end.has_value(); }));
    CHECK(accepted == 1);
    REQUIRE(second->wait([](auto& c) { return c.end.has_value(); }));
}

TEST_CASE("at the limit, a cancelled job's place is free at once", "[engine]") {
    engine_fixture f(1);
    auto first = std::make_shared<recording_client>(1, f.log);
    auto job = make_job(first, 1, text_layout::non_streaming, 1, 200);
    job->add_ids(template_ids("A long one."), true);
    REQUIRE(f.e->submit(job));
    REQUIRE(first->wait([](auto& c) { return c.frames >= 1; }));
    first->epoch_ = 1;  // the session cancelled; it submits its next utterance right away
    auto second = std::make_shared<recording_client>(2, f.log);
    auto next = make_job(second, 2, text_layout::non_streaming, 2, 3);
    next->add_ids(template_ids("Next."), true);
    CHECK(f.e->submit(next));
    REQUIRE(second->wait([](auto& c) { return c.end.has_value(); }));
    CHECK_FALSE(first->end.has_value());
}

}  // namespace
}  // namespace megatts

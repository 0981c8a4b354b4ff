#include "pipeline/session/tts_session.h"

#include <catch2/catch.hpp>
#include <opus/opus.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "pipeline/audio/wav_writer.h"
#include "pipeline/engine/fault_injecting_backend.h"
#include "pipeline/engine/reference_backend.h"
#include "tests/pipeline/engine/fake_backend.h"
#include "tests/pipeline/session/session_fixture.h"
#include "tests/support/eventually.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;
using test::pcm_options;
using test::recording_events;
using test::session_fixture;

std::vector<std::uint8_t> as_pcm16(const std::vector<float>& pcm) {
    std::vector<std::uint8_t> out;
    append_wav_samples(pcm, wav_sample_format::pcm16, out);
    return out;
}

utterance_request reference(const std::string& text, text_layout layout, std::uint64_t seed, int max_frames = 0) {
    return {text, "ryan", "english", layout, {.seed = seed}, max_frames};
}

bool done_with(recording_events& e, std::size_t n) { return e.done.size() + e.errors.size() >= n; }

// No error reported, or the test fails with their messages: after done_with(), an utterance that
// ended in an error would otherwise show only as audio missing from the checks that follow.
void require_no_errors(recording_events& events) {
    events.locked([](recording_events& e) {
        std::string lines;
        for (const auto& [context, error] : e.errors)
            lines += "utterance " + std::to_string(context) + ": " + error.message + "\n";
        INFO(lines);
        REQUIRE(e.errors.empty());
        return 0;
    });
}

void check_marks(const ttfa_marks& marks) {
    REQUIRE(marks.complete());
    for (std::size_t i = 1; i < k_ttfa_mark_count; ++i) {
        INFO(ttfa_mark_name(k_ttfa_marks[i]));
        CHECK(*marks.at(k_ttfa_marks[i - 1]) <= *marks.at(k_ttfa_marks[i]));
    }
}

TEST_CASE("whole text: non-streaming layout, PCM equals synthesize(), every TTFA mark", "[session]") {
    session_fixture f;
    const std::string text = "Hello world, this is a test.";
    REQUIRE(f.session->start(pcm_options(5)).ok());
    REQUIRE(f.session->text(text, text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);

    auto ref = test::synthesize_reference(reference(text, text_layout::non_streaming, 5));
    CHECK(f.events->bytes_of(1) == as_pcm16(ref.pcm));
    f.events->locked([&](recording_events& e) {
        // metrics once the first chunk was written: among the audio, before done.
        REQUIRE(e.log.size() >= 4);
        CHECK(e.log[0] == "started 1");
        CHECK(e.log[1] == "audio 1");
        CHECK(std::count(e.log.begin(), e.log.end(), "metrics 1") == 1);
        CHECK(e.log.back() == "done 1");
        REQUIRE(e.done.size() == 1);
        CHECK(e.done[0].layout == text_layout::non_streaming);
        CHECK(e.done[0].frames == ref.summary.frames);
        CHECK(e.done[0].stop == ref.summary.stop);
        CHECK(e.done[0].audio_ms == Approx(1000.0 * static_cast<double>(ref.pcm.size()) / 24000));
        CHECK(e.done[0].real_time_factor > 0);
        REQUIRE(e.metrics.size() == 1);
        check_marks(e.metrics[0].marks);
        CHECK(e.started[0].sample_rate == 24000);
        // Chunks are numbered from 0 and tile the stream.
        std::int64_t next = 0;
        for (std::size_t i = 0; i < e.chunks.size(); ++i) {
            CHECK(e.chunks[i].chunk.receipt.sequence == i);
            CHECK(e.chunks[i].chunk.first_sample == next);
            next += e.chunks[i].chunk.samples;
        }
        return 0;
    });
    const auto prometheus = f.registry.render();
    CHECK(prometheus.find("megatts_ttfa_seconds_count 1") != std::string::npos);
    CHECK(prometheus.find("megatts_stage_seconds_count{stage=\"first_sent\"} 1") != std::string::npos);
    CHECK(prometheus.find("megatts_sessions 1") != std::string::npos);
}

TEST_CASE("text word by word: streaming layout, PCM equals synthesize --stream-text", "[session]") {
    session_fixture f;
    const std::vector<std::string> words = {"One", " two", " three", " four", " five", " six."};
    REQUIRE(f.session->start(pcm_options(9)).ok());
    std::string text;
    for (const auto& w : words) {
        REQUIRE(f.session->text(w).ok());
        text += w;
        std::this_thread::sleep_for(30ms);  // an LLM's pace: the model runs ahead and waits
    }
    REQUIRE(f.session->end().ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    auto ref = test::synthesize_reference(reference(text, text_layout::streaming, 9));
    CHECK(f.events->bytes_of(1) == as_pcm16(ref.pcm));
    f.events->locked([&](recording_events& e) {
        REQUIRE(e.done.size() == 1);
        CHECK(e.done[0].layout == text_layout::streaming);
        CHECK(e.done[0].frames == ref.summary.frames);
        REQUIRE(e.metrics.size() == 1);
        check_marks(e.metrics[0].marks);
        return 0;
    });
}

struct decoder_deleter {
    void operator()(OpusDecoder* d) const { opus_decoder_destroy(d); }
};

TEST_CASE("Opus output: 20 ms packets that decode back to every sample", "[session]") {
    session_fixture f;
    const std::string text = "Opus packets, please.";
    auto o = pcm_options(2);
    o.format = audio_format::opus;
    REQUIRE(f.session->start(o).ok());
    REQUIRE(f.session->text(text, text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    auto ref = test::synthesize_reference(reference(text, text_layout::non_streaming, 2));

    f.events->locked([&](recording_events& e) {
        REQUIRE(e.started.size() == 1);
        CHECK(e.started[0].format == audio_format::opus);
        CHECK(e.started[0].opus_frame_ms == 20);
        const int pre_skip = e.started[0].opus_pre_skip;
        int status = 0;
        std::unique_ptr<OpusDecoder, decoder_deleter> dec(opus_decoder_create(48000, 1, &status));
        REQUIRE(status == OPUS_OK);
        std::vector<float> out(960);
        std::int64_t decoded = 0, real = 0;
        for (auto& c : e.chunks) {
            CHECK(c.chunk.format == audio_format::opus);
            CHECK(c.chunk.receipt.duration_us == 20000);
            CHECK(c.chunk.first_sample == 480 * static_cast<std::int64_t>(c.chunk.receipt.sequence));
            const int n = opus_decode_float(dec.get(), c.bytes.data(), static_cast<opus_int32>(c.bytes.size()),
                                            out.data(), 960, 0);
            CHECK(n == 960);
            decoded += n;
            real += c.chunk.samples;
        }
        CHECK(real == static_cast<std::int64_t>(ref.pcm.size()));
        const auto wanted = 2 * static_cast<std::int64_t>(ref.pcm.size());
        CHECK(decoded - pre_skip >= wanted);
        CHECK(decoded - pre_skip < wanted + 960);
        return 0;
    });
}

TEST_CASE("Opus: a packet's write completes before the next packet of its vocoder frame is encoded",
          "[session]") {
    // The vocoder gives 80 ms at once, four 20 ms packets. Each is encoded in its own strand
    // turn, so the transport's completion of packet 0 (first_sent) is not held behind the
    // encoding of packets 1-3.
    session_fixture f;
    f.events->ack_on = f.on;
    auto o = pcm_options(3);
    o.format = audio_format::opus;
    REQUIRE(f.session->start(o).ok());
    REQUIRE(f.session->text("Packets one at a time.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    f.events->locked([](recording_events& e) {
        REQUIRE(e.order.size() >= 8);
        CHECK(e.order[0] == "audio 0");
        CHECK(e.order[1] == "sent 0");
        CHECK(e.order[2] == "audio 1");
        CHECK(e.order[3] == "sent 1");
        return 0;
    });
}

TEST_CASE("PCM at 16 kHz goes through the resampler", "[session]") {
    session_fixture f;
    const std::string text = "Resample me.";
    REQUIRE(f.session->start(pcm_options(4, 16000)).ok());
    REQUIRE(f.session->text(text, text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    auto ref = test::synthesize_reference(reference(text, text_layout::non_streaming, 4));
    const auto samples = static_cast<std::int64_t>(f.events->bytes_of(1).size() / 2);
    CHECK(std::abs(samples - static_cast<std::int64_t>(ref.pcm.size()) * 2 / 3) <= 1);
    f.events->locked([](recording_events& e) {
        CHECK(e.started[0].sample_rate == 16000);
        for (auto& c : e.chunks) CHECK(c.chunk.sample_rate == 16000);
        return 0;
    });
}

TEST_CASE("cancel mid-utterance stops it at once and the session goes on", "[session]") {
    session_fixture f;
    auto o = pcm_options(1);
    o.max_frames = 400;
    REQUIRE(f.session->start(o).ok());
    REQUIRE(f.session->text("A long one that the runaway guard lets run for a while, on and on.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return e.chunks.size() >= 3; }));

    // Cancel on the session's strand, as the daemon does: no event of context 1 may follow.
    std::promise<std::size_t> cancelled;
    f.on->post([&] {
        f.session->cancel();
        cancelled.set_value(f.events->locked([](recording_events& e) { return e.log.size(); }));
    });
    const std::size_t at_cancel = cancelled.get_future().get();
    std::this_thread::sleep_for(200ms);
    f.events->locked([&](recording_events& e) {
        CHECK(e.log.size() == at_cancel);
        CHECK(e.done.empty());
        return 0;
    });
    CHECK(f.session->text("more").err().code == session_errc::no_utterance);

    const std::string text = "After the cancel.";
    REQUIRE(f.session->start(pcm_options(3)).ok());
    REQUIRE(f.session->text(text, text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    auto ref = test::synthesize_reference(reference(text, text_layout::non_streaming, 3));
    CHECK(f.events->bytes_of(2) == as_pcm16(ref.pcm));
    CHECK(f.registry.render().find("megatts_utterances_total{stop=\"cancelled\"} 1") != std::string::npos);
}

TEST_CASE("flush speaks what was sent and keeps the options for the next text", "[session]") {
    session_fixture f;
    REQUIRE(f.session->start(pcm_options(6)).ok());
    REQUIRE(f.session->text("First sentence.").ok());
    REQUIRE(f.session->flush().ok());
    REQUIRE(f.session->text("Second sentence.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 2); }));
    f.events->locked([](recording_events& e) {
        REQUIRE(e.started.size() == 2);
        CHECK(e.started[1].context == 2);
        CHECK(e.done[0].context == 1);
        CHECK(e.done[1].context == 2);
        // One at a time: every chunk of context 1 precedes every chunk of context 2.
        bool second = false;
        for (auto& c : e.chunks) {
            if (c.chunk.receipt.context == 2) second = true;
            else CHECK_FALSE(second);
        }
        return 0;
    });
    auto ref2 = test::synthesize_reference(reference("Second sentence.", text_layout::non_streaming, 6));
    CHECK(f.events->bytes_of(2) == as_pcm16(ref2.pcm));
}

TEST_CASE("queued utterances run in order, each as synthesize() gives it", "[session]") {
    session_fixture f;
    const std::string a = "The first.", b = "The second one.";
    REQUIRE(f.session->start(pcm_options(1)).ok());
    REQUIRE(f.session->text(a, text_end::end).ok());
    REQUIRE(f.session->start(pcm_options(2)).ok());
    REQUIRE(f.session->text(b, text_end::end).ok());
    REQUIRE(f.session->start(pcm_options(3)).ok());  // 1 + max_queued_utterances (2) live
    CHECK(f.session->start(pcm_options(4)).err().code == session_errc::utterance_open);
    REQUIRE(f.session->text("Third.", text_end::end).ok());
    CHECK(f.session->start(pcm_options(4)).err().code == session_errc::too_many_utterances);
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 3); }));
    CHECK(f.events->bytes_of(1) == as_pcm16(test::synthesize_reference(reference(a, text_layout::non_streaming, 1)).pcm));
    CHECK(f.events->bytes_of(2) == as_pcm16(test::synthesize_reference(reference(b, text_layout::non_streaming, 2)).pcm));
    f.events->locked([](recording_events& e) {
        CHECK(e.done[0].context == 1);
        CHECK(e.done[1].context == 2);
        CHECK(e.done[2].context == 3);
        return 0;
    });
}

TEST_CASE("a slow transport stalls the session with bounded audio, then it resumes", "[session]") {
    session_fixture f;  // soft limit 300 ms
    f.events->hold = true;
    auto o = pcm_options(8);
    o.max_frames = 60;  // 4.8 s of audio, far past the limit
    REQUIRE(f.session->start(o).ok());
    REQUIRE(f.session->text("Keep talking while nobody listens, please.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return !e.stalls.empty(); }));
    std::this_thread::sleep_for(300ms);
    const auto handed = f.events->locked([](recording_events& e) { return e.chunks.size(); });
    std::this_thread::sleep_for(300ms);
    f.events->locked([&](recording_events& e) {
        CHECK(e.stalls[0].stalled);
        CHECK(e.chunks.size() == handed);  // not scheduled while stalled
        // Past the 300 ms limit by at most what was already in the pipeline: the frame that
        // crossed it and the output queue's two steps.
        CHECK(handed * 80 <= 300 + 3 * 80);
        CHECK(e.done.empty());
        return 0;
    });
    CHECK(f.registry.render().find("megatts_send_queue_seconds 0\n") == std::string::npos);  // held audio counts
    CHECK(f.registry.render().find("megatts_stalled_sessions 1\n") != std::string::npos);
    f.events->release_held();
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    CHECK(f.registry.render().find("megatts_stalled_sessions 0\n") != std::string::npos);
    f.events->locked([](recording_events& e) {
        REQUIRE(e.stalls.size() >= 2);
        CHECK_FALSE(e.stalls[1].stalled);
        return 0;
    });
}

TEST_CASE("calls out of order or out of range fail with their code and change nothing", "[session]") {
    session_fixture f;
    auto& s = *f.session;
    CHECK(s.text("early").err().code == session_errc::no_utterance);
    CHECK(s.end().err().code == session_errc::no_utterance);
    auto bad = pcm_options(1);
    bad.voice = "nobody";
    CHECK(s.start(bad).err().code == session_errc::unknown_voice);
    bad = pcm_options(1);
    bad.language = "klingon";
    CHECK(s.start(bad).err().code == session_errc::unknown_language);
    bad = pcm_options(1);
    bad.format = audio_format::opus;
    bad.sample_rate = 48000;
    CHECK(s.start(bad).err().code == session_errc::invalid_argument);
    bad = pcm_options(1, 96000);
    CHECK(s.start(bad).err().code == session_errc::invalid_argument);
    bad = pcm_options(1);
    bad.sampling.top_p = 0.0f;
    CHECK(s.start(bad).err().code == session_errc::invalid_argument);

    REQUIRE(s.start(pcm_options(1)).ok());
    CHECK(s.end().err().code == session_errc::empty_text);
    CHECK(s.text(std::string(300, 'a')).err().code == session_errc::text_too_long);
    REQUIRE(s.text("Fine.", text_end::end).ok());
    CHECK(s.text("late").err().code == session_errc::no_utterance);
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    f.events->locked([](recording_events& e) {
        CHECK(e.started.size() == 1);
        CHECK(e.errors.empty());
        return 0;
    });
    CHECK(f.registry.render().find("megatts_errors_total{code=\"no_utterance\"} 3") != std::string::npos);
}

TEST_CASE("text that is not UTF-8 fails its utterance only", "[session]") {
    session_fixture f;
    REQUIRE(f.session->start(pcm_options(1)).ok());
    REQUIRE(f.session->text("bad \xff byte", text_end::end).ok());
    REQUIRE(f.session->start(pcm_options(1)).ok());
    REQUIRE(f.session->text("Good text.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 2); }));
    f.events->locked([](recording_events& e) {
        REQUIRE(e.errors.size() == 1);
        CHECK(e.errors[0].first == 1);
        CHECK(e.errors[0].second.code == session_errc::invalid_utf8);
        REQUIRE(e.done.size() == 1);
        CHECK(e.done[0].context == 2);
        return 0;
    });
}

TEST_CASE("an utterance finding every engine slot taken fails with engine_full; a later one runs", "[session]") {
    session_fixture f(test::small_config(), make_reference_backend(test::tiny_model(), 1, 0));
    f.events->hold = true;  // the first session's transport stalls: its utterance keeps the slot
    auto o = pcm_options(3);
    o.max_frames = 40;
    REQUIRE(f.session->start(o).ok());
    REQUIRE(f.session->text("Hold the only slot.", text_end::end).ok());
    REQUIRE(f.events->wait([](auto& e) { return !e.chunks.empty(); }));

    auto events = std::make_shared<recording_events>();
    auto second = f.service->open_session(f.pool.make_strand(), events);
    REQUIRE(second.ok());
    events->session = second->get();
    REQUIRE((*second)->start(pcm_options(4)).ok());
    REQUIRE((*second)->text("No room.", text_end::end).ok());
    REQUIRE(events->wait([](auto& e) { return !e.errors.empty(); }));
    events->locked([](recording_events& e) {
        CHECK(e.errors[0].first == 1);
        CHECK(e.errors[0].second.code == session_errc::engine_full);
        CHECK_THAT(e.errors[0].second.message, Catch::Contains("every synthesis slot (1) is busy"));
        return 0;
    });

    // The slot is free once the first utterance is done, before its done event.
    f.events->release_held();
    REQUIRE(f.events->wait([](auto& e) { return done_with(e, 1); }));
    require_no_errors(*f.events);
    REQUIRE((*second)->start(pcm_options(4)).ok());
    REQUIRE((*second)->text("Room now.", text_end::end).ok());
    REQUIRE(events->wait([](auto& e) { return done_with(e, 2); }));
    events->locked([](recording_events& e) {
        REQUIRE(e.done.size() == 1);
        CHECK(e.done[0].context == 2);
        return 0;
    });
    CHECK(f.registry.render().find("megatts_errors_total{code=\"engine_full\"} 1") != std::string::npos);
}

TEST_CASE("an engine failure reaches every session, then the service's hook", "[session]") {
    auto config = test::small_config();
    std::promise<std::string> hooked;
    config.on_engine_failure = [&](const std::string& reason) { hooked.set_value(reason); };  // once, or it throws
    session_fixture f(config, inject_fault(make_reference_backend(test::tiny_model(), 2, 0), 3));
    auto idle_events = std::make_shared<recording_events>();
    auto idle = f.service->open_session(f.pool.make_strand(), idle_events);
    REQUIRE(idle.ok());
    idle_events->session = idle->get();

    REQUIRE(f.session->start(pcm_options(5)).ok());
    REQUIRE(f.session->text("This one meets the fault.", text_end::end).ok());
    auto failed = [](recording_events& e) {
        return std::any_of(e.errors.begin(), e.errors.end(),
                           [](const auto& x) { return x.second.code == session_errc::engine_failed; });
    };
    REQUIRE(f.events->wait(failed));
    REQUIRE(idle_events->wait(failed));
    idle_events->locked([](recording_events& e) {
        CHECK(e.errors[0].first == 0);  // the session as a whole: it had no utterance
        CHECK_THAT(e.errors[0].second.message, Catch::Contains("injected fault"));
        return 0;
    });
    f.events->locked([](recording_events& e) {
        CHECK(e.done.empty());
        return 0;
    });
    auto reason = hooked.get_future();
    REQUIRE(reason.wait_for(20s) == std::future_status::ready);
    CHECK_THAT(reason.get(), Catch::Contains("injected fault at generate() call 3"));
    // An utterance after the failure is refused the same way.
    REQUIRE((*idle)->start(pcm_options(6)).ok());
    REQUIRE((*idle)->text("Too late.", text_end::end).ok());
    REQUIRE(idle_events->wait([](auto& e) { return e.errors.size() >= 2; }));
    idle_events->locked([](recording_events& e) {
        CHECK(e.errors[1].first == 1);
        CHECK(e.errors[1].second.code == session_errc::engine_failed);
        return 0;
    });
}

TEST_CASE("admission is bounded; close frees the slot and silences the session", "[session]") {
    session_fixture f;  // max_sessions 2
    thread_pool& pool = f.pool;
    auto events = std::make_shared<recording_events>();
    auto second = f.service->open_session(pool.make_strand(), events);
    REQUIRE(second.ok());
    auto third = f.service->open_session(pool.make_strand(), events);
    REQUIRE_FALSE(third.ok());
    CHECK(third.err().code == session_errc::too_many_sessions);
    CHECK(f.service->open_sessions() == 2);

    events->session = second->get();
    REQUIRE((*second)->start(pcm_options(1)).ok());
    REQUIRE((*second)->text("Closing soon.", text_end::end).ok());
    (*second)->close();
    CHECK((*second)->text("x").err().code == session_errc::session_closed);
    CHECK(f.service->open_sessions() == 1);
    std::this_thread::sleep_for(200ms);
    events->locked([](recording_events& e) {
        CHECK(e.done.empty());
        return 0;
    });
    CHECK(f.service->open_session(pool.make_strand(), events).ok());
}

// A strand that counts what is posted to it, then runs it on another.
class counting_strand final : public strand {
public:
    explicit counting_strand(std::shared_ptr<strand> on) : on_(std::move(on)) {}
    void post(strand_task task) override {
        ++posts_;
        on_->post(std::move(task));
    }
    int posts() const { return posts_.load(); }

private:
    std::shared_ptr<strand> on_;
    std::atomic<int> posts_{0};
};

TEST_CASE("after close() returns, the engine posts nothing more to the session's strand", "[session]") {
    // The engine may hold a closed session until its step ends and deliver the step's frames to
    // it; were they posted, they could reach an executor that only had to outlive the session
    // (tts_session.h). A step is held in generate() while the session closes.
    auto state = std::make_shared<test::fake_backend::shared_state>();
    state->allow(0);
    session_fixture f(test::small_config(),
                      std::make_unique<test::fake_backend>(backend_limits{.slots = 2, .max_batch = 2}, state));
    auto counted = std::make_shared<counting_strand>(f.pool.make_strand());
    auto events = std::make_shared<recording_events>();
    auto opened = f.service->open_session(counted, events);
    REQUIRE(opened.ok());
    events->session = opened->get();
    REQUIRE((*opened)->start(pcm_options(1)).ok());
    REQUIRE((*opened)->text("Closed while its frame is made.", text_end::end).ok());
    REQUIRE(state->wait_held());

    (*opened)->close();
    const int posts = counted->posts();
    state->allow(-1);
    // The step's frames are delivered before the next step lets the closed utterance go.
    auto released = [&] {
        std::lock_guard lock(state->mutex);
        return !state->released.empty();
    };
    REQUIRE(test::eventually(released));
    CHECK(counted->posts() == posts);
    events->locked([](recording_events& e) {
        CHECK(e.chunks.empty());
        return 0;
    });
}

}  // namespace
}  // namespace megatts

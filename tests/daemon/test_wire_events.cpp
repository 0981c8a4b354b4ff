#include "daemon/protocol/wire_events.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;

TEST_CASE("Opus is timed on the 48 kHz clock, PCM16 at its own rate", "[protocol]") {
    CHECK(wire_timestamp(audio_format::opus, 24000, 480) == 960);
    CHECK(wire_timestamp(audio_format::pcm16, 16000, 320) == 320);
}

TEST_CASE("started: the wire clock and the Opus pre-skip", "[protocol]") {
    const auto opus = to_started_event({.context = 3, .format = audio_format::opus, .sample_rate = 24000,
                                        .opus_frame_ms = 10, .opus_pre_skip = 312});
    CHECK(opus.sample_rate == 48000);
    CHECK(opus.opus_frame_ms == 10);
    CHECK(opus.pre_skip == 312);
    const auto pcm = to_started_event({.context = 4, .format = audio_format::pcm16, .sample_rate = 16000});
    CHECK(pcm.sample_rate == 16000);
    CHECK_FALSE(pcm.pre_skip);
}

TEST_CASE("metrics: every mark in order, in ms after received", "[protocol]") {
    const auto t0 = ttfa_marks::clock::now();
    ttfa_marks marks;
    std::chrono::microseconds at{0};
    for (const auto mark : k_ttfa_marks) {
        marks.record(mark, t0 + at);
        at += 1500us;
    }
    const auto e = to_metrics_event({.context = 2, .marks = marks});
    REQUIRE(e.marks.size() == 9);
    CHECK(e.marks[0] == std::pair<std::string, double>{"received", 0.0});
    CHECK(e.marks[8].first == "first_sent");
    CHECK(e.marks[8].second == Approx(12.0));
    CHECK(e.server_ttfa_ms == Approx(12.0));
}

TEST_CASE("done: stop reasons and layouts", "[protocol]") {
    const auto end = to_done_event({.context = 1, .stop = stop_reason::eos, .layout = text_layout::streaming,
                                    .frames = 10, .audio_ms = 800, .real_time_factor = 0.5},
                                   41);
    CHECK(end.reason == done_reason::end);
    CHECK(end.layout == utterance_layout::streaming);
    CHECK(end.messages == 41);
    CHECK(end.rtf == 0.5);
    CHECK(to_done_event({.stop = stop_reason::runaway_guard}, 1).reason == done_reason::max_frames);
    CHECK(to_done_event({.stop = stop_reason::max_frames}, 1).reason == done_reason::max_frames);
    CHECK_FALSE(to_done_event({.stop = stop_reason::eos, .audio_ms = 0}, 1).rtf);
}

}  // namespace
}  // namespace megatts

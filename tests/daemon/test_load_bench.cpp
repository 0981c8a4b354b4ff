// unit: the pure parts of `megatts bench load`: the arrival plan, the playback simulation, the
// percentiles, the /metrics reader, a rate's summary, the URL, the sentence pool.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "daemon/bench/arrival_plan.h"
#include "daemon/bench/metrics_text.h"
#include "daemon/bench/percentile.h"
#include "daemon/bench/playout_clock.h"
#include "daemon/bench/rate_summary.h"
#include "daemon/bench/sentence_pool.h"
#include "daemon/bench/ws_url.h"
#include "daemon/client/host_port.h"

namespace megatts::bench {
namespace {

using namespace std::chrono_literals;
using time_point = std::chrono::steady_clock::time_point;

TEST_CASE("arrivals are Poisson at the rate asked, ascending, reproducible from the seed", "[bench]") {
    auto plan = plan_arrivals(20.0, 500.0, 7, 24, 0);
    REQUIRE(plan.ok());
    // 10000 arrivals expected; a Poisson count's standard deviation is 100.
    CHECK(std::abs(static_cast<double>(plan->size()) - 10000.0) < 500.0);
    double previous = 0, gaps = 0, gaps2 = 0;
    std::set<std::size_t> sentences;
    for (const auto& r : *plan) {
        CHECK(r.at_s >= previous);
        CHECK(r.at_s < 500.0);
        const double gap = r.at_s - previous;
        gaps += gap;
        gaps2 += gap * gap;
        previous = r.at_s;
        sentences.insert(r.sentence);
        CHECK(r.seed < (std::uint64_t{1} << 53));
    }
    // Exponential gaps: mean 1/rate, coefficient of variation 1.
    const double n = static_cast<double>(plan->size());
    const double mean = gaps / n;
    const double sd = std::sqrt(gaps2 / n - mean * mean);
    CHECK(mean == Approx(0.05).epsilon(0.05));
    CHECK(sd / mean == Approx(1.0).epsilon(0.05));
    CHECK(sentences.size() == 24);

    auto again = plan_arrivals(20.0, 500.0, 7, 24, 0);
    REQUIRE(again.ok());
    REQUIRE(again->size() == plan->size());
    CHECK(again->back().at_s == plan->back().at_s);
    CHECK(again->back().seed == plan->back().seed);
    auto other = plan_arrivals(20.0, 500.0, 8, 24, 0);
    REQUIRE(other.ok());
    CHECK(other->front().at_s != plan->front().at_s);
}

TEST_CASE("a few sampling seeds are drawn from 1..N", "[bench]") {
    auto plan = plan_arrivals(50.0, 10.0, 1, 3, 2);
    REQUIRE(plan.ok());
    std::set<std::uint64_t> seeds;
    for (const auto& r : *plan) seeds.insert(r.seed);
    CHECK(seeds == std::set<std::uint64_t>{1, 2});
}

TEST_CASE("a plan refuses a rate or duration that is not positive, and an empty pool", "[bench]") {
    CHECK_FALSE(plan_arrivals(0.0, 10.0, 1, 3, 0).ok());
    CHECK_FALSE(plan_arrivals(-1.0, 10.0, 1, 3, 0).ok());
    CHECK_FALSE(plan_arrivals(1.0, 0.0, 1, 3, 0).ok());
    CHECK_FALSE(plan_arrivals(NAN, 10.0, 1, 3, 0).ok());
    CHECK_FALSE(plan_arrivals(1.0, 10.0, 1, 0, 0).ok());
}

// Arrivals of `count` messages of 20 ms each, `gap` apart, from t0.
void arrive_every(playout_clock& clock, time_point t0, int count, std::chrono::milliseconds gap) {
    for (int i = 0; i < count; ++i) clock.arrive(t0 + i * gap, 20ms);
}

TEST_CASE("playback from a server faster than real time never runs dry", "[bench]") {
    playout_clock clock({.start_buffer = 60ms});
    const time_point t0{};
    arrive_every(clock, t0, 100, 5ms);
    CHECK_FALSE(clock.played_out());
    clock.end(t0 + 500ms);
    CHECK(clock.underruns() == 0);
    REQUIRE(clock.played_out());
    CHECK(*clock.played_out() == t0 + 2010ms);  // 2 s of audio from 10 ms on
    CHECK(clock.stalled() == 0us);
    CHECK_FALSE(clock.first_dry());
    REQUIRE(clock.first_played());
    CHECK(*clock.first_played() == t0 + 10ms);  // the third 20 ms packet fills the 60 ms buffer
}

TEST_CASE("audio slower than real time underruns, rebuffers, and raises the target", "[bench]") {
    playout_clock clock({.start_buffer = 60ms, .step = 20ms, .max = 200ms});
    const time_point t0{};
    // 60 ms at once, then one 20 ms packet every 40 ms: playback starts at t0 and runs dry at
    // 100 ms; with the target raised to 80 ms it restarts when 80 ms are buffered, at 240 ms.
    arrive_every(clock, t0, 3, 0ms);
    for (int i = 1; i <= 6; ++i) clock.arrive(t0 + i * 40ms, 20ms);
    clock.end(t0 + 240ms);
    CHECK(clock.underruns() == 1);
    CHECK(clock.stalled() == 140ms);
    CHECK(*clock.first_played() == t0);
    REQUIRE(clock.first_dry());
    CHECK(*clock.first_dry() == t0 + 100ms);
}

TEST_CASE("a gap before the end message is an underrun; the end plays out the rest", "[bench]") {
    playout_clock clock({.start_buffer = 40ms});
    const time_point t0{};
    arrive_every(clock, t0, 2, 0ms);
    clock.end(t0 + 100ms);  // the buffer ran dry at 40 ms, before the end was known
    CHECK(clock.underruns() == 1);
    playout_clock fine({.start_buffer = 40ms});
    arrive_every(fine, t0, 2, 0ms);
    fine.end(t0 + 30ms);
    CHECK(fine.underruns() == 0);
}

TEST_CASE("an utterance shorter than the jitter buffer plays at its end, without an underrun", "[bench]") {
    playout_clock clock({.start_buffer = 60ms});
    const time_point t0{};
    clock.arrive(t0, 20ms);
    CHECK_FALSE(clock.first_played());
    clock.arrive(t0 + 1ms, 0us);
    clock.end(t0 + 1ms);
    REQUIRE(clock.first_played());
    CHECK(*clock.first_played() == t0 + 1ms);
    CHECK(clock.underruns() == 0);
}

TEST_CASE("percentiles are nearest-rank", "[bench]") {
    std::vector<double> v;
    for (int i = 1; i <= 100; ++i) v.push_back(101 - i);  // unsorted
    CHECK(*percentile(v, 50) == 50);
    CHECK(*percentile(v, 95) == 95);
    CHECK(*percentile(v, 99) == 99);
    CHECK(*percentile(v, 100) == 100);
    CHECK(*percentile(v, 0) == 1);
    CHECK(*percentile({3.0}, 99) == 3.0);
    CHECK(*percentile({1.0, 2.0}, 50) == 1.0);
    CHECK_FALSE(percentile({}, 50));
}

TEST_CASE("the /metrics reader keeps names, label text and values, and skips the rest", "[bench]") {
    const auto samples = parse_metrics_text(
        "# HELP megatts_sessions Open sessions.\n"
        "# TYPE megatts_sessions gauge\n"
        "megatts_sessions 3\n"
        "megatts_websocket_closes_total{code=\"1008\"} 2\r\n"
        "odd{reason=\"a \\\"}\\\" b\",x=\"y\"} 1.5e3\n"
        "megatts_ttfa_seconds_bucket{le=\"+Inf\"} 7\n"
        "\n"
        "not a sample line\n"
        "nan_value NaN\n");
    REQUIRE(samples.size() == 5);
    CHECK(*find_sample(samples, "megatts_sessions") == 3);
    CHECK(*find_sample(samples, "megatts_websocket_closes_total", "code=\"1008\"") == 2);
    CHECK(*find_sample(samples, "odd", "reason=\"a \\\"}\\\" b\",x=\"y\"") == 1500);
    CHECK(*find_sample(samples, "megatts_ttfa_seconds_bucket", "le=\"+Inf\"") == 7);
    CHECK(std::isnan(*find_sample(samples, "nan_value")));
    CHECK_FALSE(find_sample(samples, "megatts_websocket_closes_total"));
}

TEST_CASE("a rate's summary weighs the audio the engine made a second of its steps against what the rate asked",
          "[bench]") {
    rate_result r;
    for (double audio_ms : {6000.0, 10000.0}) r.outcomes.push_back({.audio_ms = audio_ms});
    r.outcomes.push_back({.error = "server_busy"});  // no audio: not in the mean
    const auto metrics = [](double audio_s, double step_s, double steps) {
        return parse_metrics_text("megatts_audio_seconds_total " + std::to_string(audio_s) +
                                  "\nmegatts_engine_frame_seconds_sum " + std::to_string(step_s) +
                                  "\nmegatts_engine_frame_seconds_count " + std::to_string(steps) + "\n");
    };
    r.metrics_before = metrics(100, 2, 10);
    r.metrics_after = metrics(1100, 6, 60);
    const auto s = summarize({.rate = 50}, r);
    REQUIRE(s.engine_audio_s_per_s);
    CHECK(*s.engine_audio_s_per_s == Approx(1000.0 / 4.0));  // 1000 audio s in 4 s of steps
    REQUIRE(s.asked_audio_s_per_s);
    CHECK(*s.asked_audio_s_per_s == Approx(50 * 8.0));  // 50 a second of 8 s each
    CHECK(s.server_histograms.at("megatts_engine_frame_seconds").observations == 50);

    SECTION("a server without the engine's metrics has no such figure") {
        r.metrics_before.clear();
        r.metrics_after.clear();
        CHECK_FALSE(summarize({.rate = 50}, r).engine_audio_s_per_s);
    }
}

TEST_CASE("a label's value is read back unescaped, and a missing or broken one is nullopt", "[bench]") {
    const std::string labels = R"(backend="cuda",device="GPU \"80GB\" \\ one\ntwo",empty="")";
    CHECK(*label_value(labels, "backend") == "cuda");
    CHECK(*label_value(labels, "device") == "GPU \"80GB\" \\ one\ntwo");
    CHECK(*label_value(labels, "empty") == "");
    CHECK_FALSE(label_value(labels, "driver"));
    CHECK_FALSE(label_value(labels, "dev"));  // a prefix of a name is not the name
    CHECK_FALSE(label_value(R"(backend="cuda)", "backend"));  // no closing quote
    CHECK_FALSE(label_value(R"(backend=cuda)", "backend"));   // unquoted
    CHECK_FALSE(label_value("", "backend"));
}

TEST_CASE("the server URL is ws://HOST[:PORT][/PATH]", "[bench]") {
    auto u = parse_ws_url("ws://127.0.0.1:8080/v1/tts");
    REQUIRE(u.ok());
    CHECK(u->host == "127.0.0.1");
    CHECK(u->port == 8080);
    CHECK(u->path == "/v1/tts");
    auto bare = parse_ws_url("ws://example.org");
    REQUIRE(bare.ok());
    CHECK(bare->port == 80);
    CHECK(bare->path == "/v1/tts");
    auto v6 = parse_ws_url("ws://[::1]:9000/x");
    REQUIRE(v6.ok());
    CHECK(v6->host == "::1");
    CHECK(v6->port == 9000);
    for (const char* bad : {"http://a:1/", "wss://a:1/", "ws://:80/", "ws://a:0/", "ws://a:70000/", "ws://a:x/",
                            "ws://[::1/", "ws://a:/"}) {
        INFO(bad);
        CHECK_FALSE(parse_ws_url(bad).ok());
    }
    CHECK(client::host_port("::1", 9000) == "[::1]:9000");
    CHECK(client::host_port("127.0.0.1", 80) == "127.0.0.1:80");
    auto local = resolve_host("127.0.0.1");
    REQUIRE(local.ok());
    CHECK(*local == "127.0.0.1");
}

TEST_CASE("the sentence pool has English and Chinese, and names a language it lacks", "[bench]") {
    const std::vector<std::string> both{"english", "chinese"};
    auto all = sentences_in(both);
    REQUIRE(all.ok());
    CHECK(all->size() == sentence_pool().size());
    const std::vector<std::string> english{"english"};
    auto en = sentences_in(english);
    REQUIRE(en.ok());
    CHECK(!en->empty());
    for (const auto& s : *en) CHECK(s.language == "english");
    const std::vector<std::string> klingon{"klingon"};
    auto none = sentences_in(klingon);
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.err().message, Catch::Contains("klingon"));
}

TEST_CASE("a pool sentence's spoken length is its words or ideographs at a speaker's pace, 3-15 s", "[bench]") {
    CHECK(spoken_seconds({"english", "Please hold while I transfer your call."}) == Approx(7 / 2.5));
    CHECK(spoken_seconds({"english", "  two   words "}) == Approx(2 / 2.5));
    CHECK(spoken_seconds({"chinese", "请稍等，我帮您转接到客服部门。"}) == Approx(13 / 4.0));
    for (const auto& s : sentence_pool()) {
        INFO(s.text);
        CHECK(spoken_seconds(s) >= 2.5);
        CHECK(spoken_seconds(s) <= 15.0);
    }
}

}  // namespace
}  // namespace megatts::bench

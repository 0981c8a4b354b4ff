#include "pipeline/telemetry/metrics_registry.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "pipeline/telemetry/pipeline_metrics.h"

namespace megatts {
namespace {

TEST_CASE("the registry renders Prometheus text format 0.0.4", "[telemetry]") {
    metrics_registry r;
    auto errors = r.add_counter("megatts_test_errors_total", "Errors by code.", {{"code", "queue_full"}});
    auto other = r.add_counter("megatts_test_errors_total", "Errors by code.", {{"code", "a\"b\\c\nd"}});
    auto depth = r.add_gauge("megatts_test_depth", "Frames queued.");
    constexpr double bounds[] = {0.1, 0.5};
    auto latency = r.add_histogram("megatts_test_seconds", "Latency.", bounds, {{"stage", "x"}});
    REQUIRE(errors.ok());
    REQUIRE(other.ok());
    REQUIRE(depth.ok());
    REQUIRE(latency.ok());
    (*errors)->add(3);
    (*depth)->set(2.5);
    (*latency)->observe(0.05);
    (*latency)->observe(0.5);  // bounds are inclusive
    (*latency)->observe(7);
    CHECK(r.render() ==
          "# HELP megatts_test_errors_total Errors by code.\n"
          "# TYPE megatts_test_errors_total counter\n"
          "megatts_test_errors_total{code=\"queue_full\"} 3\n"
          "megatts_test_errors_total{code=\"a\\\"b\\\\c\\nd\"} 0\n"
          "# HELP megatts_test_depth Frames queued.\n"
          "# TYPE megatts_test_depth gauge\n"
          "megatts_test_depth 2.5\n"
          "# HELP megatts_test_seconds Latency.\n"
          "# TYPE megatts_test_seconds histogram\n"
          "megatts_test_seconds_bucket{stage=\"x\",le=\"0.1\"} 1\n"
          "megatts_test_seconds_bucket{stage=\"x\",le=\"0.5\"} 2\n"
          "megatts_test_seconds_bucket{stage=\"x\",le=\"+Inf\"} 3\n"
          "megatts_test_seconds_sum{stage=\"x\"} 7.55\n"
          "megatts_test_seconds_count{stage=\"x\"} 3\n");
}

TEST_CASE("registering again returns the same metric; bad names and types are errors", "[telemetry]") {
    metrics_registry r;
    auto a = r.add_gauge("g", "help");
    auto b = r.add_gauge("g", "help");
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(*a == *b);
    CHECK_FALSE(r.add_counter("g", "help").ok());
    CHECK_FALSE(r.add_counter("1bad", "help").ok());
    CHECK_FALSE(r.add_counter("ok", "help", {{"le", "x"}}).ok());
    constexpr double unsorted[] = {1.0, 0.5};
    CHECK_FALSE(r.add_histogram("h", "help", unsorted).ok());
}

TEST_CASE("a gauge returns exactly to zero when what was added is taken away, in any order", "[telemetry]") {
    gauge g;
    // Seconds of 20 ms Opus packets and 80 ms PCM blocks, added and removed out of order.
    for (int i = 0; i < 1000; ++i) g.add(i % 3 == 0 ? 0.08 : 0.02);
    for (int i = 999; i >= 0; --i) g.add(-(i % 3 == 0 ? 0.08 : 0.02));
    CHECK(g.value() == 0.0);
    g.add(0.1);
    g.add(0.2);
    CHECK(g.value() == 0.3);  // doubles give 0.30000000000000004
    g.set(-2.5);
    CHECK(g.value() == -2.5);
}

TEST_CASE("metrics take concurrent updates", "[telemetry]") {
    metrics_registry r;
    auto c = r.add_counter("c_total", "help");
    constexpr double bounds[] = {1.0};
    auto h = r.add_histogram("h", "help", bounds);
    REQUIRE(c.ok());
    REQUIRE(h.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) {
                (*c)->add();
                (*h)->observe(0.5);
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK((*c)->value() == 40000);
    CHECK((*h)->snapshot().cumulative.back() == 40000);
}

TEST_CASE("the pipeline's metrics register under their fixed names", "[telemetry]") {
    metrics_registry r;
    auto m = pipeline_metrics::create(r);
    REQUIRE(m.ok());
    m->count_error(session_errc::too_many_sessions);
    const auto text = r.render();
    for (const char* line : {"# TYPE megatts_ttfa_seconds histogram", "megatts_stage_seconds_bucket{stage=\"first_sent\",le=",
                             "# TYPE megatts_real_time_factor histogram", "megatts_sessions 0",
                             "megatts_queue_depth{queue=\"session_input\"} 0", "megatts_send_queue_seconds 0",
                             "megatts_stalled_sessions 0",
                             "megatts_client_underruns_total 0", "megatts_utterances_total{stop=\"cancelled\"} 0",
                             "megatts_errors_total{code=\"too_many_sessions\"} 1"}) {
        INFO(line);
        CHECK(text.find(line) != std::string::npos);
    }
    CHECK(text.find("stage=\"received\"") == std::string::npos);
}

}  // namespace
}  // namespace megatts

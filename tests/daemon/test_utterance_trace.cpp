// The utterance's Chrome trace: stage spans from the TTFA marks, the engine steps' host and
// device spans, the bound on steps and the counts that say what was left out.
#include "daemon/protocol/utterance_trace.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

std::vector<nlohmann::json> events_named(const nlohmann::json& trace, const std::string& name, int tid) {
    std::vector<nlohmann::json> out;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["name"] == name && e["tid"] == tid) out.push_back(e);
    return out;
}

TEST_CASE("trace: one span per TTFA stage, then each step's calls on the engine and GPU rows", "[protocol]") {
    const auto t0 = clock::now();
    ttfa_marks marks;
    std::chrono::microseconds at{0};
    for (const auto mark : k_ttfa_marks) {
        marks.record(mark, t0 + at);
        at += 1500us;
    }
    std::vector<step_trace> steps;
    for (int i = 0; i < 2; ++i) {
        const auto base = t0 + 4500us + i * 10ms;
        step_trace s{.step = static_cast<std::uint64_t>(7 + i), .rows = i == 0 ? 20 : 1, .prefill = i == 0 ? 1 : 0};
        s.generate = {.host = {base, base + 3ms}, .device = host_span{base + 100us, base + 2900us}, .items = 1};
        s.vocode = {.host = {base + 3ms, base + 4ms}, .items = 1};  // no device time: the CPU vocoder
        steps.push_back(s);
    }
    const auto trace = nlohmann::json::parse(
        utterance_trace_json({.session = 12, .context = 2, .marks = marks, .steps = steps, .frames = 30}));

    for (std::size_t i = 1; i < k_ttfa_marks.size(); ++i) {
        const auto stage = events_named(trace, std::string(ttfa_mark_name(k_ttfa_marks[i])), 1);
        REQUIRE(stage.size() == 1);
        CHECK(stage[0]["ts"].get<double>() == Approx(1500.0 * static_cast<double>(i - 1)));
        CHECK(stage[0]["dur"].get<double>() == Approx(1500.0));
        CHECK(stage[0]["pid"] == 2);
    }
    const auto generate = events_named(trace, "generate", 2);
    REQUIRE(generate.size() == 2);
    CHECK(generate[0]["ts"].get<double>() == Approx(4500.0));
    CHECK(generate[0]["dur"].get<double>() == Approx(3000.0));
    CHECK(generate[0]["args"]["step"] == 7);
    CHECK(generate[0]["args"]["rows"] == 20);
    CHECK(generate[0]["args"]["prefill"] == 1);
    CHECK(generate[1]["ts"].get<double>() == Approx(14500.0));
    const auto gpu = events_named(trace, "generate", 3);
    REQUIRE(gpu.size() == 2);
    CHECK(gpu[0]["ts"].get<double>() == Approx(4600.0));
    CHECK(gpu[0]["dur"].get<double>() == Approx(2800.0));
    CHECK(events_named(trace, "vocode", 2).empty());
    CHECK(events_named(trace, "vocode", 4).size() == 2);
    CHECK(events_named(trace, "vocode", 3).empty());

    CHECK(trace["otherData"]["session"] == 12);
    CHECK(trace["otherData"]["steps_traced"] == 2);
    CHECK(trace["otherData"]["steps_not_traced"] == 28);
    int named_threads = 0;
    for (const auto& e : trace["traceEvents"]) named_threads += e["ph"] == "M" && e["name"] == "thread_name";
    CHECK(named_threads == 4);
}

TEST_CASE("trace: without `received` no span can be placed; missing marks leave their stages out", "[protocol]") {
    ttfa_marks none;
    const std::vector<step_trace> steps(1);
    auto trace = nlohmann::json::parse(utterance_trace_json({.context = 1, .marks = none, .steps = steps, .frames = 1}));
    for (const auto& e : trace["traceEvents"]) CHECK(e["ph"] == "M");

    ttfa_marks some;
    const auto t0 = clock::now();
    some.record(ttfa_mark::received, t0);
    some.record(ttfa_mark::tokenized, t0 + 1ms);
    some.record(ttfa_mark::first_sent, t0 + 9ms);
    trace = nlohmann::json::parse(utterance_trace_json({.context = 1, .marks = some, .frames = 0}));
    CHECK(events_named(trace, "tokenized", 1).size() == 1);
    const auto sent = events_named(trace, "first_sent", 1);
    REQUIRE(sent.size() == 1);
    CHECK(sent[0]["ts"].get<double>() == Approx(1000.0));  // from the last mark present
    CHECK(sent[0]["dur"].get<double>() == Approx(8000.0));
}

}  // namespace
}  // namespace megatts

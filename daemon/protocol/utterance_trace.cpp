#include "daemon/protocol/utterance_trace.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

namespace megatts {
namespace {

using json = nlohmann::ordered_json;
using clock = std::chrono::steady_clock;

constexpr int k_stage_tid = 1;
constexpr int k_engine_tid = 2;
constexpr int k_gpu_tid = 3;
constexpr int k_audio_tid = 4;

double micros(clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

json thread_name(std::uint32_t pid, int tid, const char* name) {
    return {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json complete(const std::string& name, const char* category, clock::time_point origin, const host_span& span,
              std::uint32_t pid, int tid, json args) {
    return {{"name", name},
            {"cat", category},
            {"ph", "X"},
            {"ts", micros(span.begin - origin)},
            {"dur", micros(std::max(span.end - span.begin, clock::duration::zero()))},
            {"pid", pid},
            {"tid", tid},
            {"args", std::move(args)}};
}

void add_call(json& events, const char* name, const backend_call& call, const step_trace& step, clock::time_point origin,
              std::uint32_t pid) {
    json args = {{"step", step.step}, {"batch", call.items}};
    if (std::string_view(name) == "generate") {
        args["rows"] = step.rows;
        args["prefill"] = step.prefill;
    }
    const int tid = std::string_view(name) == "vocode" ? k_audio_tid : k_engine_tid;
    events.push_back(complete(name, "engine", origin, call.host, pid, tid, args));
    if (call.device) events.push_back(complete(name, "gpu", origin, *call.device, pid, k_gpu_tid, std::move(args)));
}

}  // namespace

std::string utterance_trace_json(const utterance_trace& trace) {
    const std::uint32_t pid = trace.context;
    auto events = json::array();
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"name", "utterance " + std::to_string(trace.context)}}}});
    events.push_back(thread_name(pid, k_stage_tid, "TTFA stages"));
    events.push_back(thread_name(pid, k_engine_tid, "engine"));
    events.push_back(thread_name(pid, k_audio_tid, "engine: audio"));
    if (std::any_of(trace.steps.begin(), trace.steps.end(), [](const step_trace& s) { return s.generate.device || s.vocode.device; }))
        events.push_back(thread_name(pid, k_gpu_tid, "GPU"));
    const auto origin = trace.marks.at(ttfa_mark::received);
    std::optional<clock::time_point> previous;
    for (const auto mark : k_ttfa_marks) {
        const auto at = trace.marks.at(mark);
        if (!at || !origin) continue;
        if (previous) {
            events.push_back(complete(std::string(ttfa_mark_name(mark)), "ttfa", *origin, {*previous, *at}, pid,
                                      k_stage_tid, {{"ms_after_received", *trace.marks.ms_after_received(mark)}}));
        }
        previous = at;
    }
    if (origin) {
        for (const auto& step : trace.steps) {
            add_call(events, "generate", step.generate, step, *origin, pid);
            add_call(events, "vocode", step.vocode, step, *origin, pid);
        }
    }
    const int traced = static_cast<int>(trace.steps.size());
    return json{{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"session", trace.session},
                  {"context", trace.context},
                  {"frames", trace.frames},
                  {"steps_traced", traced},
                  {"steps_not_traced", std::max(trace.frames - traced, 0)}}}}
        .dump();
}

}  // namespace megatts

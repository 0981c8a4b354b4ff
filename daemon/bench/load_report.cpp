#include "daemon/bench/load_report.h"

#include <cstdio>
#include <string_view>

namespace megatts::bench {
namespace {

std::string ms_triple(const latency_summary& l) {
    if (!l.p50) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f/%.1f/%.1f", *l.p50, *l.p95, *l.p99);
    return buf;
}

nlohmann::json latency_json(const latency_summary& l) {
    nlohmann::json j{{"count", l.count}};
    if (l.p50) j.update({{"p50", *l.p50}, {"p95", *l.p95}, {"p99", *l.p99}, {"max", *l.max}});
    return j;
}

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void print_rate_header() {
    std::printf("%7s %8s %6s %6s %20s %20s %20s %9s %9s %11s\n", "rate/s", "requests", "done", "errors",
                "TTFA client ms", "server first_sent ms", "first played ms", "underruns", "audio s/s", "in flight");
    std::printf("%7s %8s %6s %6s %20s %20s %20s %9s %9s %11s\n", "", "", "", "", "p50/p95/p99", "p50/p95/p99",
                "p50/p95/p99", "", "", "peak/mean");
}

void print_rate(const rate_summary& s) {
    char in_flight[32];
    std::snprintf(in_flight, sizeof in_flight, "%d/%.1f", s.peak_in_flight, s.mean_in_flight);
    std::printf("%7.2f %8zu %6zu %6zu %20s %20s %20s %9d %9.2f %11s\n", s.rate, s.requests, s.completed,
                s.requests - s.completed, ms_triple(s.ttfa).c_str(), ms_triple(s.server_ttfa).c_str(),
                ms_triple(s.first_played).c_str(), s.underruns, s.audio_s_per_s, in_flight);
    if (!s.errors.empty()) {
        std::printf("        errors:");
        for (const auto& [code, n] : s.errors) std::printf(" %s %zu", code.c_str(), n);
        std::printf("\n");
    }
    for (const auto& [series, g] : s.server_gauges)
        std::printf("        server %s: mean %.2f, peak %.0f (%zu samples)\n", series.c_str(), g.mean, g.peak, g.samples);
    if (s.first_underrun.p50)
        std::printf("        first underrun after playback began, ms: p50/p95/p99 %s over %zu requests\n",
                    ms_triple(s.first_underrun).c_str(), s.first_underrun.count);
    if (s.engine_audio_s_per_s && s.asked_audio_s_per_s)
        std::printf("        engine: %.1f audio s a second of its steps' time, %.1f asked (%.2fx)\n",
                    *s.engine_audio_s_per_s, *s.asked_audio_s_per_s, *s.engine_audio_s_per_s / *s.asked_audio_s_per_s);
    for (const auto& [family, h] : s.server_histograms) {
        // A labelled series is keyed family{labels}: its unit is the family's.
        if (std::string_view(family).substr(0, family.find('{')).ends_with("_seconds")) {
            // A step's calls: their mean, and the share of the rate's time the engine spent in them.
            std::printf("        server %s: mean %.2f ms over %.0f observations, %.0f%% of the run\n", family.c_str(),
                        h.mean * 1e3, h.observations, s.elapsed_s > 0 ? 100 * h.sum / s.elapsed_s : 0.0);
        } else {
            std::printf("        server %s: mean %.2f over %.0f observations\n", family.c_str(), h.mean, h.observations);
        }
    }
}

nlohmann::json rate_json(const rate_summary& s) {
    nlohmann::json gauges = nlohmann::json::object();
    for (const auto& [series, g] : s.server_gauges)
        gauges[series] = {{"mean", g.mean}, {"peak", g.peak}, {"samples", g.samples}};
    nlohmann::json histograms = nlohmann::json::object();
    for (const auto& [family, h] : s.server_histograms)
        histograms[family] = {{"observations", h.observations}, {"mean", h.mean}, {"sum", h.sum}};
    return {{"rate", s.rate},
            {"duration_s", s.duration_s},
            {"requests", s.requests},
            {"completed", s.completed},
            {"errors", s.errors},
            {"ttfa_ms", latency_json(s.ttfa)},
            {"server_ttfa_ms", latency_json(s.server_ttfa)},
            {"first_played_ms", latency_json(s.first_played)},
            {"connect_ms", latency_json(s.connect)},
            {"underruns", s.underruns},
            {"first_underrun_ms", latency_json(s.first_underrun)},
            {"requests_with_underruns", s.requests_with_underruns},
            {"audio_s", s.audio_s},
            {"audio_s_per_s", s.audio_s_per_s},
            {"elapsed_s", s.elapsed_s},
            {"peak_in_flight", s.peak_in_flight},
            {"mean_in_flight", s.mean_in_flight},
            {"server_gauges", gauges},
            {"server_histograms", histograms},
            {"engine_audio_s_per_s", optional_json(s.engine_audio_s_per_s)},
            {"asked_audio_s_per_s", optional_json(s.asked_audio_s_per_s)}};
}

nlohmann::json outcomes_json(const std::vector<request_outcome>& outcomes) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& o : outcomes) {
        out.push_back({{"index", o.index},
                       {"planned_at_s", o.planned_at_s},
                       {"started_at_s", o.started_at_s},
                       {"done_at_s", o.done_at_s},
                       {"finished_at_s", o.finished_at_s},
                       {"sentence", o.sentence},
                       {"language", o.language},
                       {"seed", o.seed},
                       {"started", o.started},
                       {"error", o.error},
                       {"error_message", o.error_message},
                       {"done_reason", o.done_reason},
                       {"connect_ms", optional_json(o.connect_ms)},
                       {"ttfa_ms", optional_json(o.ttfa_ms)},
                       {"server_ttfa_ms", optional_json(o.server_ttfa_ms)},
                       {"first_played_ms", optional_json(o.first_played_ms)},
                       {"audio_ms", o.audio_ms},
                       {"pcm16_samples", o.pcm16_samples},
                       {"audio_messages", o.audio_messages},
                       {"frames", o.frames},
                       {"underruns", o.underruns},
                       {"stalled_ms", o.stalled_ms},
                       {"first_underrun_ms", optional_json(o.first_underrun_ms)}});
    }
    return out;
}

}  // namespace megatts::bench

#include "daemon/bench/rate_summary.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <string_view>
#include <vector>

#include "daemon/bench/percentile.h"

namespace megatts::bench {
namespace {

latency_summary latencies(const std::vector<request_outcome>& outcomes,
                          const std::function<std::optional<double>(const request_outcome&)>& figure) {
    std::vector<double> values;
    for (const auto& o : outcomes)
        if (auto v = figure(o)) values.push_back(*v);
    return {.count = values.size(),
            .p50 = percentile(values, 50),
            .p95 = percentile(values, 95),
            .p99 = percentile(values, 99),
            .max = percentile(values, 100)};
}

// What a series grew by over the rate; nullopt when the server does not have it.
std::optional<double> delta(const std::vector<metric_sample>& before, const std::vector<metric_sample>& after,
                            std::string_view name, std::string_view labels = {}) {
    const auto last = find_sample(after, name, labels);
    if (!last) return std::nullopt;
    return *last - find_sample(before, name, labels).value_or(0);
}

// The engine's histograms (its steps' batch, rows and times): what the rate added to their
// _count and _sum.
std::map<std::string, histogram_summary> engine_histograms(const std::vector<metric_sample>& before,
                                                          const std::vector<metric_sample>& after) {
    std::map<std::string, histogram_summary> out;
    for (const auto& s : after) {
        if (!s.name.ends_with("_count") || !s.name.starts_with("megatts_engine_")) continue;
        const auto family = s.name.substr(0, s.name.size() - 6);
        const double count = delta(before, after, s.name, s.labels).value_or(0);
        const double sum = delta(before, after, family + "_sum", s.labels).value_or(0);
        const auto key = s.labels.empty() ? family : family + "{" + s.labels + "}";
        out[key] = {.observations = count, .mean = count > 0 ? sum / count : 0, .sum = sum};
    }
    return out;
}

}  // namespace

rate_summary summarize(const rate_settings& settings, const rate_result& result) {
    const auto& outcomes = result.outcomes;
    rate_summary s;
    s.rate = settings.rate;
    s.duration_s = settings.duration_s;
    s.requests = outcomes.size();
    for (const auto& o : outcomes) {
        if (o.error.empty())
            ++s.completed;
        else
            ++s.errors[o.error];
        s.underruns += o.underruns;
        if (o.underruns > 0) ++s.requests_with_underruns;
        s.audio_s += o.audio_ms / 1000.0;
    }
    s.ttfa = latencies(outcomes, [](const request_outcome& o) { return o.ttfa_ms; });
    s.server_ttfa = latencies(outcomes, [](const request_outcome& o) { return o.server_ttfa_ms; });
    s.first_played = latencies(outcomes, [](const request_outcome& o) { return o.first_played_ms; });
    s.connect = latencies(outcomes, [](const request_outcome& o) { return o.connect_ms; });
    s.first_underrun = latencies(outcomes, [](const request_outcome& o) { return o.first_underrun_ms; });
    s.elapsed_s = result.elapsed_s;
    // Delivered audio over the time it took to deliver it: up to the last done, not the end of
    // the last playback.
    double last_done_s = 0;
    for (const auto& o : outcomes) last_done_s = std::max(last_done_s, o.done_at_s);
    s.audio_s_per_s = last_done_s > 0 ? s.audio_s / last_done_s : 0;
    s.peak_in_flight = result.peak_in_flight;
    s.mean_in_flight = result.mean_in_flight;
    for (const auto& [series, values] : result.polled) {
        if (values.empty()) continue;
        s.server_gauges[series] = {.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()),
                                   .peak = *std::max_element(values.begin(), values.end()),
                                   .samples = values.size()};
    }
    s.server_histograms = engine_histograms(result.metrics_before, result.metrics_after);
    if (s.completed > 0) s.asked_audio_s_per_s = s.rate * s.audio_s / static_cast<double>(s.completed);
    const auto made = delta(result.metrics_before, result.metrics_after, "megatts_audio_seconds_total");
    const auto steps = delta(result.metrics_before, result.metrics_after, "megatts_engine_frame_seconds_sum");
    if (made && steps && *steps > 0) s.engine_audio_s_per_s = *made / *steps;
    return s;
}

}  // namespace megatts::bench

// metrics_text: the samples of a Prometheus text exposition (GET /metrics, format 0.0.4), read
// back by `megatts bench load` to report what the server saw (engine batch sizes, active
// utterances) beside what the clients measured.
//
// Contract: parse_metrics_text returns one sample per sample line, in order: the metric name,
// the label set exactly as written between the braces (empty without), and the value
// (NaN and +Inf included). Comment lines (# HELP, # TYPE) and blank lines are skipped, and so is
// a line that does not parse (the report then lacks that series; it does not fail).
// Label values may hold escaped quotes and braces. find_sample returns a series' value by name
// and label text; label_value one label's value from such a text, unescaped (nullopt when the
// label is absent or the text does not parse). Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace megatts::bench {

struct metric_sample {
    std::string name;
    std::string labels;  // e.g. `code="1008"`
    double value = 0;
};

std::vector<metric_sample> parse_metrics_text(std::string_view text);

std::optional<double> find_sample(const std::vector<metric_sample>& samples, std::string_view name,
                                  std::string_view labels = {});

std::optional<std::string> label_value(std::string_view labels, std::string_view name);

}  // namespace megatts::bench

#include "daemon/bench/metrics_text.h"

#include <cstdlib>

namespace megatts::bench {
namespace {

bool name_char(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

std::optional<metric_sample> parse_line(std::string_view line) {
    metric_sample s;
    std::size_t i = 0;
    while (i < line.size() && name_char(line[i], i == 0)) ++i;
    if (i == 0) return std::nullopt;
    s.name = std::string(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
        const auto open = ++i;
        bool quoted = false;
        for (; i < line.size(); ++i) {
            if (quoted && line[i] == '\\') {
                ++i;  // the escaped character, whatever it is
            } else if (line[i] == '"') {
                quoted = !quoted;
            } else if (!quoted && line[i] == '}') {
                break;
            }
        }
        if (i >= line.size()) return std::nullopt;
        s.labels = std::string(line.substr(open, i - open));
        ++i;
    }
    while (i < line.size() && line[i] == ' ') ++i;
    const std::string value(line.substr(i, line.find(' ', i) - i));
    if (value.empty()) return std::nullopt;
    char* end = nullptr;
    s.value = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size()) return std::nullopt;
    return s;
}

}  // namespace

std::vector<metric_sample> parse_metrics_text(std::string_view text) {
    std::vector<metric_sample> out;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        auto line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line.front() == '#') continue;
        if (auto s = parse_line(line)) out.push_back(std::move(*s));
    }
    return out;
}

std::optional<std::string> label_value(std::string_view labels, std::string_view name) {
    // name="value" pairs, comma-separated; in a value \\, \" and \n stand for \, " and a newline.
    std::size_t i = 0;
    while (i < labels.size()) {
        const auto eq = labels.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= labels.size() || labels[eq + 1] != '"') return std::nullopt;
        const auto key = labels.substr(i, eq - i);
        std::string value;
        std::size_t j = eq + 2;
        for (; j < labels.size() && labels[j] != '"'; ++j) {
            if (labels[j] != '\\' || j + 1 == labels.size()) {
                value += labels[j];
                continue;
            }
            const char escaped = labels[++j];
            value += escaped == 'n' ? '\n' : escaped;
        }
        if (j >= labels.size()) return std::nullopt;  // no closing quote
        if (key == name) return value;
        i = j + 1;
        if (i < labels.size() && labels[i] == ',') ++i;
    }
    return std::nullopt;
}

std::optional<double> find_sample(const std::vector<metric_sample>& samples, std::string_view name,
                                  std::string_view labels) {
    for (const auto& s : samples)
        if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
}

}  // namespace megatts::bench

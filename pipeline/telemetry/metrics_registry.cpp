#include "pipeline/telemetry/metrics_registry.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace megatts {
namespace {

bool valid_name(std::string_view name, bool allow_colon) {
    auto head = [&](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (allow_colon && c == ':'); };
    auto tail = [&](char c) { return head(c) || std::isdigit(static_cast<unsigned char>(c)); };
    return !name.empty() && head(name.front()) && std::all_of(name.begin() + 1, name.end(), tail);
}

std::string format_number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[32];  // the shortest round-trip form of a double fits in 24
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string escape(std::string_view text, bool quote) {
    std::string out;
    for (char c : text) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (quote && c == '"') out += "\\\"";
        else out += c;
    }
    return out;
}

// `{a="x",b="y"}`, with `extra` (e.g. le="0.5") last; empty when there are no labels.
std::string label_set(const metric_labels& labels, std::string_view extra = {}) {
    std::string out;
    for (const auto& [name, value] : labels) {
        if (!out.empty()) out += ',';
        out.append(name).append("=\"").append(escape(value, true)).append("\"");
    }
    if (!extra.empty()) {
        if (!out.empty()) out += ',';
        out.append(extra);
    }
    return out.empty() ? out : "{" + out + "}";
}

}  // namespace

result<counter*> metrics_registry::add_counter(std::string_view name, std::string_view help, metric_labels labels) {
    auto s = find_or_add(name, help, kind::counter, std::move(labels), {});
    if (!s) return s.err();
    return (*s)->c.get();
}

result<gauge*> metrics_registry::add_gauge(std::string_view name, std::string_view help, metric_labels labels) {
    auto s = find_or_add(name, help, kind::gauge, std::move(labels), {});
    if (!s) return s.err();
    return (*s)->g.get();
}

result<histogram*> metrics_registry::add_histogram(std::string_view name, std::string_view help,
                                                   std::span<const double> upper_bounds, metric_labels labels) {
    for (std::size_t i = 0; i < upper_bounds.size(); ++i) {
        if (!std::isfinite(upper_bounds[i]) || (i > 0 && upper_bounds[i] <= upper_bounds[i - 1]))
            return make_error(error_kind::invalid_input,
                              "metric " + std::string(name) + ": bucket bounds must be finite and increasing");
    }
    auto s = find_or_add(name, help, kind::histogram, std::move(labels), upper_bounds);
    if (!s) return s.err();
    return (*s)->h.get();
}

result<metrics_registry::series*> metrics_registry::find_or_add(std::string_view name, std::string_view help,
                                                                kind type, metric_labels labels,
                                                                std::span<const double> upper_bounds) {
    if (!valid_name(name, true)) return make_error(error_kind::invalid_input, "invalid metric name '" + std::string(name) + "'");
    for (const auto& [label, value] : labels) {
        if (!valid_name(label, false) || label == "le")
            return make_error(error_kind::invalid_input,
                              "metric " + std::string(name) + ": invalid label name '" + label + "'");
    }
    std::lock_guard lock(mutex_);
    auto fam = std::find_if(families_.begin(), families_.end(), [&](const family& f) { return f.name == name; });
    if (fam == families_.end()) {
        families_.push_back(family{std::string(name), std::string(help), type, {}});
        fam = std::prev(families_.end());
    } else if (fam->type != type) {
        return make_error(error_kind::invalid_input, "metric " + std::string(name) + " is registered with another type");
    }
    auto member = std::find_if(fam->members.begin(), fam->members.end(),
                               [&](const series& s) { return s.labels == labels; });
    if (member != fam->members.end()) return &*member;
    series& s = fam->members.emplace_back(series{std::move(labels), nullptr, nullptr, nullptr});
    switch (type) {
    case kind::counter: s.c = std::make_unique<counter>(); break;
    case kind::gauge: s.g = std::make_unique<gauge>(); break;
    case kind::histogram: s.h = std::make_unique<histogram>(upper_bounds); break;
    }
    return &s;
}

std::string metrics_registry::render() const {
    static constexpr const char* type_names[] = {"counter", "gauge", "histogram"};
    std::string out;
    std::lock_guard lock(mutex_);
    for (const auto& f : families_) {
        out += "# HELP " + f.name + " " + escape(f.help, false) + "\n";
        out += "# TYPE " + f.name + " " + type_names[static_cast<int>(f.type)] + "\n";
        for (const auto& s : f.members) {
            if (s.c) out += f.name + label_set(s.labels) + " " + format_number(s.c->value()) + "\n";
            if (s.g) out += f.name + label_set(s.labels) + " " + format_number(s.g->value()) + "\n";
            if (!s.h) continue;
            auto snap = s.h->snapshot();
            for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
                const auto le = i < snap.upper_bounds.size() ? format_number(snap.upper_bounds[i]) : "+Inf";
                out += f.name + "_bucket" + label_set(s.labels, "le=\"" + le + "\"") + " " +
                       std::to_string(snap.cumulative[i]) + "\n";
            }
            out += f.name + "_sum" + label_set(s.labels) + " " + format_number(snap.sum) + "\n";
            out += f.name + "_count" + label_set(s.labels) + " " + std::to_string(snap.cumulative.back()) + "\n";
        }
    }
    return out;
}

}  // namespace megatts

// metrics_registry: owns every counter, gauge and histogram of the process and renders them
// as Prometheus text exposition format 0.0.4 (GET /metrics).
//
// Contract: metrics are registered once (at start-up, or when a session kind first needs
// one) and live as long as the registry; the returned references stay valid. A family is
// one name with one HELP, one TYPE and series that differ by labels; registering the same
// name and labels again returns the existing metric; the same name with another type is a
// programming error reported as invalid_input. Names must match [a-zA-Z_:][a-zA-Z0-9_:]*,
// label names [a-zA-Z_][a-zA-Z0-9_]*; label values are escaped on rendering.
// Thread: all methods are safe from any thread; registration takes a mutex, updates of the
// metrics themselves are lock-free, render() takes the mutex and snapshots. Blocking: only
// that short mutex. Errors: result values, never exceptions.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/telemetry/counter.h"
#include "pipeline/telemetry/gauge.h"
#include "pipeline/telemetry/histogram.h"

namespace megatts {

using metric_labels = std::vector<std::pair<std::string, std::string>>;

class metrics_registry {
public:
    result<counter*> add_counter(std::string_view name, std::string_view help, metric_labels labels = {});
    result<gauge*> add_gauge(std::string_view name, std::string_view help, metric_labels labels = {});
    result<histogram*> add_histogram(std::string_view name, std::string_view help,
                                     std::span<const double> upper_bounds, metric_labels labels = {});

    std::string render() const;

private:
    enum class kind { counter, gauge, histogram };
    struct series {
        metric_labels labels;
        std::unique_ptr<counter> c;    // the one of the family's kind is set
        std::unique_ptr<gauge> g;
        std::unique_ptr<histogram> h;
    };
    struct family {
        std::string name;
        std::string help;
        kind type;
        std::deque<series> members;
    };

    // The series, made (with its metric, `upper_bounds` for a histogram) under the mutex if new.
    result<series*> find_or_add(std::string_view name, std::string_view help, kind type, metric_labels labels,
                                std::span<const double> upper_bounds);

    mutable std::mutex mutex_;
    std::deque<family> families_;  // registration order, which render() keeps
};

}  // namespace megatts

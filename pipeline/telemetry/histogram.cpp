#include "pipeline/telemetry/histogram.h"

#include <algorithm>

namespace megatts {

histogram::histogram(std::span<const double> upper_bounds)
    : bounds_(upper_bounds.begin(), upper_bounds.end()),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

void histogram::observe(double value) {
    // Prometheus buckets are inclusive upper bounds: the first bound >= value.
    const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
    buckets_[static_cast<std::size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
}

histogram::snapshot_data histogram::snapshot() const {
    snapshot_data s;
    s.upper_bounds = bounds_;
    s.cumulative.reserve(bounds_.size() + 1);
    std::uint64_t running = 0;
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative.push_back(running);
    }
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
}

}  // namespace megatts

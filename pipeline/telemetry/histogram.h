// histogram: a Prometheus histogram with fixed bucket upper bounds.
//
// Contract: the bounds are fixed at construction (strictly increasing, finite; +Inf is
// implicit). observe() and snapshot() from any thread, lock-free: a snapshot taken while
// observations land may see a count that one bucket does not yet reflect, which Prometheus
// tolerates between scrapes. Never blocks, no errors.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace megatts {

class histogram {
public:
    explicit histogram(std::span<const double> upper_bounds);

    void observe(double value);

    struct snapshot_data {
        std::vector<double> upper_bounds;
        std::vector<std::uint64_t> cumulative;  // per bound, then +Inf last, which is the count
        double sum = 0.0;
    };
    snapshot_data snapshot() const;

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bound, then +Inf
    std::atomic<double> sum_{0.0};
};

}  // namespace megatts

// counter: a monotonically increasing Prometheus counter (events, or seconds of audio).
//
// Contract: lock-free; add() and value() from any thread; add() takes a non-negative amount.
// Never blocks, no errors.
#pragma once

#include <atomic>

namespace megatts {

class counter {
public:
    void add(double n = 1.0) { value_.fetch_add(n, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

}  // namespace megatts

// gauge: a Prometheus gauge, a value that goes up and down (sessions, queue depths).
//
// Contract: lock-free; set(), add() and value() from any thread. Never blocks, no errors.
#pragma once

#include <atomic>

namespace megatts {

class gauge {
public:
    void set(double v) { value_.store(v, std::memory_order_relaxed); }
    void add(double d) { value_.fetch_add(d, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

}  // namespace megatts

// gauge: a Prometheus gauge, a value that goes up and down (sessions, queue depths).
//
// Contract: lock-free; set(), add() and value() from any thread. Never blocks, no errors.
// The value is kept in fixed point, in millionths: amounts added and later taken away (a
// frame's seconds of queued audio, from many sessions in any order) bring it back exactly to
// where it was, which a sum of doubles does not (it drifts by rounding, and a gauge of live work
// reads -0.000000 instead of 0 once everything is gone). Resolution 1e-6, range +-9.2e12.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>

namespace megatts {

class gauge {
public:
    void set(double v) { units_.store(to_units(v), std::memory_order_relaxed); }
    void add(double d) { units_.fetch_add(to_units(d), std::memory_order_relaxed); }
    double value() const { return static_cast<double>(units_.load(std::memory_order_relaxed)) / k_units; }

private:
    static constexpr double k_units = 1e6;
    static std::int64_t to_units(double v) { return std::llround(v * k_units); }

    std::atomic<std::int64_t> units_{0};
};

}  // namespace megatts

#include "daemon/systemd/watchdog_gate.h"

namespace megatts {

std::string_view watchdog_verdict_name(watchdog_verdict verdict) {
    switch (verdict) {
    case watchdog_verdict::feed: return "feed";
    case watchdog_verdict::loop_stalled: return "event loop stalled";
    case watchdog_verdict::engine_stalled: return "engine stalled";
    }
    return "feed";
}

watchdog_gate::watchdog_gate(clock::duration limit, now_fn now)
    : limit_(limit), now_(std::move(now)), loop_ran_at_(now_().time_since_epoch().count()) {}

void watchdog_gate::loop_ran() { loop_ran_at_.store(now_().time_since_epoch().count(), std::memory_order_relaxed); }

watchdog_gate::clock::duration watchdog_gate::loop_silent_for() const {
    const clock::time_point ran(clock::duration(loop_ran_at_.load(std::memory_order_relaxed)));
    return now_() - ran;
}

watchdog_verdict watchdog_gate::check(clock::duration engine_busy_for) const {
    if (loop_silent_for() > limit_) return watchdog_verdict::loop_stalled;
    if (engine_busy_for > limit_) return watchdog_verdict::engine_stalled;
    return watchdog_verdict::feed;
}

}  // namespace megatts

// watchdog_gate: whether `megatts serve` may tell systemd it is alive (WATCHDOG=1): only while
// both the event loop and the engine make progress (DESIGN.md §6), so that a hung engine step
// (a GPU that never returns) gets the process restarted even though its sockets still answer.
//
// Contract: the event loop proves progress by running a probe that the heartbeat posts to it;
// the probe calls loop_ran(). The engine proves it by not staying in one unit of work
// (engine::busy_for, zero while idle) longer than `limit`. check() compares both against
// `limit` at the injected clock's now: feed, or which of the two stalled (the loop first). The
// loop counts as having run at construction. Thread: loop_ran() from the event loop, check()
// from the heartbeat thread (the probe time is atomic). Blocking: never.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string_view>

namespace megatts {

enum class watchdog_verdict { feed, loop_stalled, engine_stalled };

std::string_view watchdog_verdict_name(watchdog_verdict verdict);

class watchdog_gate {
public:
    using clock = std::chrono::steady_clock;
    using now_fn = std::function<clock::time_point()>;

    explicit watchdog_gate(clock::duration limit, now_fn now = clock::now);

    void loop_ran();
    watchdog_verdict check(clock::duration engine_busy_for) const;
    // Since the probe last ran (for the log line that says why the watchdog is not fed).
    clock::duration loop_silent_for() const;
    clock::duration limit() const { return limit_; }

private:
    const clock::duration limit_;
    const now_fn now_;
    std::atomic<clock::rep> loop_ran_at_;
};

}  // namespace megatts

// watchdog_gate: WATCHDOG=1 only while both the event loop and the engine make progress, on a
// clock the test moves by hand.
#include "daemon/systemd/watchdog_gate.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;
using clock = watchdog_gate::clock;

struct fake_clock {
    clock::time_point now = clock::time_point(1000s);
    watchdog_gate::now_fn fn() {
        return [this] { return now; };
    }
};

TEST_CASE("a fresh gate feeds: the loop counts as having run at construction", "[watchdog]") {
    fake_clock t;
    watchdog_gate gate(5s, t.fn());
    CHECK(gate.check(0s) == watchdog_verdict::feed);
    t.now += 5s;
    CHECK(gate.check(0s) == watchdog_verdict::feed);  // at the limit, not past it
}

TEST_CASE("an event loop that stops running the probe stops the feeding, and resumes it", "[watchdog]") {
    fake_clock t;
    watchdog_gate gate(5s, t.fn());
    t.now += 3s;
    gate.loop_ran();
    t.now += 5s;
    CHECK(gate.check(0s) == watchdog_verdict::feed);
    t.now += 1ms;
    CHECK(gate.check(0s) == watchdog_verdict::loop_stalled);
    CHECK(gate.loop_silent_for() == 5s + 1ms);
    gate.loop_ran();
    CHECK(gate.check(0s) == watchdog_verdict::feed);
}

TEST_CASE("an engine stuck in one step past the limit stops the feeding; idle or busy within it feeds",
          "[watchdog]") {
    fake_clock t;
    watchdog_gate gate(5s, t.fn());
    CHECK(gate.check(5s) == watchdog_verdict::feed);
    CHECK(gate.check(5s + 1ms) == watchdog_verdict::engine_stalled);
    CHECK(gate.check(10min) == watchdog_verdict::engine_stalled);
    CHECK(gate.check(0s) == watchdog_verdict::feed);  // the step finished: zero while idle
}

TEST_CASE("a stalled loop is named first when both stall", "[watchdog]") {
    fake_clock t;
    watchdog_gate gate(2s, t.fn());
    t.now += 3s;
    CHECK(gate.check(3s) == watchdog_verdict::loop_stalled);
    CHECK(watchdog_verdict_name(watchdog_verdict::engine_stalled) == "engine stalled");
    CHECK(watchdog_verdict_name(watchdog_verdict::loop_stalled) == "event loop stalled");
}

}  // namespace
}  // namespace megatts

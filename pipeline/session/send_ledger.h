// send_ledger: how much audio a session has handed to its transport and not yet seen written,
// and whether that is past the session's soft limit (session_events.h, backpressure).
//
// Contract: handed() and returned() on the session's strand; both say whether the stall state
// changed, so the session can tell the client and wake the engine. Stalled from the moment the
// queued audio exceeds the soft limit until it falls to half of it (hysteresis, so one frame's
// packets do not toggle the state). stalled() is an atomic read for the engine thread. The
// gauges follow the queued audio and the stalled sessions across all sessions.
#pragma once

#include <atomic>
#include <cstdint>

#include "pipeline/telemetry/gauge.h"

namespace megatts {

class send_ledger {
public:
    send_ledger(std::int64_t soft_limit_us, gauge& total_seconds, gauge& stalled_sessions);
    ~send_ledger();
    send_ledger(const send_ledger&) = delete;
    send_ledger& operator=(const send_ledger&) = delete;

    bool handed(std::int64_t duration_us);
    bool returned(std::int64_t duration_us);

    bool stalled() const { return stalled_.load(std::memory_order_acquire); }
    std::int64_t queued_us() const { return queued_us_; }

private:
    bool update();

    std::int64_t soft_limit_us_;
    gauge& total_seconds_;
    gauge& stalled_sessions_;
    std::int64_t queued_us_ = 0;
    std::atomic<bool> stalled_{false};
};

}  // namespace megatts

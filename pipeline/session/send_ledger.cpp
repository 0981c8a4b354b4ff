#include "pipeline/session/send_ledger.h"

namespace megatts {
namespace {

double to_seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }

}  // namespace

send_ledger::send_ledger(std::int64_t soft_limit_us, gauge& total_seconds, gauge& stalled_sessions)
    : soft_limit_us_(soft_limit_us), total_seconds_(total_seconds), stalled_sessions_(stalled_sessions) {}

send_ledger::~send_ledger() {
    total_seconds_.add(-to_seconds(queued_us_));
    if (stalled()) stalled_sessions_.add(-1);
}

bool send_ledger::handed(std::int64_t duration_us) {
    queued_us_ += duration_us;
    total_seconds_.add(to_seconds(duration_us));
    return update();
}

bool send_ledger::returned(std::int64_t duration_us) {
    queued_us_ -= duration_us;
    total_seconds_.add(-to_seconds(duration_us));
    return update();
}

bool send_ledger::update() {
    const bool was = stalled();
    const bool now = was ? queued_us_ > soft_limit_us_ / 2 : queued_us_ > soft_limit_us_;
    stalled_.store(now, std::memory_order_release);
    if (now != was) stalled_sessions_.add(now ? 1 : -1);
    return now != was;
}

}  // namespace megatts

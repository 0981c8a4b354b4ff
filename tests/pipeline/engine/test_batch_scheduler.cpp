#include "pipeline/engine/batch_scheduler.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;
using ids = std::vector<std::size_t>;

batch_candidate running(std::chrono::microseconds lead, bool paced = true) {
    return {.first_frame = false, .lead = lead, .paced = paced, .rows = 1};
}
batch_candidate fresh(int rows = 1) { return {.first_frame = true, .lead = 0us, .paced = true, .rows = rows}; }

const batch_policy roomy{.max_batch = 64, .max_rows = 0, .lead_limit = 2000ms, .yield_lead = 500ms};

TEST_CASE("first frames go first in arrival order, then the rest closest to an underrun first", "[scheduler]") {
    const std::vector<batch_candidate> c = {running(300ms), fresh(), running(-40ms), running(100ms), fresh(),
                                            running(100ms)};
    CHECK(pick_batch(c, roomy) == ids{1, 4, 2, 3, 5, 0});
}

TEST_CASE("without first frames, every runnable job goes, by ascending lead", "[scheduler]") {
    const std::vector<batch_candidate> c = {running(1900ms), running(0ms), running(800ms)};
    CHECK(pick_batch(c, roomy) == ids{1, 2, 0});
}

TEST_CASE("a step with a first frame leaves out jobs far ahead of playback", "[scheduler]") {
    const std::vector<batch_candidate> c = {running(499ms), running(500ms), fresh(), running(1500ms, false),
                                            running(20ms)};
    CHECK(pick_batch(c, roomy) == ids{2, 4, 0});
    auto no_yield = roomy;
    no_yield.yield_lead = 0ms;
    CHECK(pick_batch(c, no_yield) == ids{2, 4, 0, 1, 3});
}

TEST_CASE("no one sits out a first frame's step when the jobs that could go overflow a batch", "[scheduler]") {
    auto policy = roomy;
    policy.max_batch = 4;
    const std::vector<batch_candidate> fits = {running(600ms), fresh(), running(700ms), running(20ms)};
    CHECK(pick_batch(fits, policy) == ids{1, 3});
    auto overflows = fits;
    overflows.push_back(running(900ms));
    CHECK(pick_batch(overflows, policy) == ids{1, 3, 0, 2});
}

TEST_CASE("paced jobs at the lead limit sit out; unpaced ones do not", "[scheduler]") {
    const std::vector<batch_candidate> c = {running(2000ms), running(1999ms), running(5000ms, false)};
    CHECK(lead_limited(c[0], roomy));
    CHECK_FALSE(lead_limited(c[1], roomy));
    CHECK_FALSE(lead_limited(c[2], roomy));
    CHECK(pick_batch(c, roomy) == ids{1, 2});
    auto unlimited = roomy;
    unlimited.lead_limit = 0ms;
    CHECK_FALSE(lead_limited(c[0], unlimited));
    CHECK(pick_batch(c, unlimited) == ids{1, 0, 2});
}

TEST_CASE("jobs past join_lead go only in a step another job calls for", "[scheduler]") {
    auto policy = roomy;
    policy.join_lead = 1000ms;
    const std::vector<batch_candidate> far = {running(1500ms), running(1000ms)};
    CHECK_FALSE(calls_for_step(far[0], policy));
    CHECK(pick_batch(far, policy).empty());
    // One below join_lead, an unpaced job or a first frame calls for the step; the rest join it.
    auto near = far;
    near.push_back(running(999ms));
    CHECK(pick_batch(near, policy) == ids{2, 1, 0});
    auto unpaced = far;
    unpaced.push_back(running(5000ms, false));
    CHECK(pick_batch(unpaced, policy) == ids{1, 0, 2});
    auto first = far;
    first.push_back(fresh());
    policy.yield_lead = 0ms;
    CHECK(pick_batch(first, policy) == ids{2, 1, 0});
    policy.join_lead = 0ms;
    CHECK(pick_batch(far, policy) == ids{1, 0});
    // Without a lead limit nothing is held back, join_lead included.
    policy.join_lead = 1000ms;
    policy.lead_limit = 0ms;
    CHECK(calls_for_step(far[0], policy));
    CHECK(pick_batch(far, policy) == ids{1, 0});
}

TEST_CASE("the batch stops at max_batch, in priority order", "[scheduler]") {
    auto policy = roomy;
    policy.max_batch = 3;
    const std::vector<batch_candidate> c = {running(400ms), running(10ms), fresh(), running(200ms), fresh()};
    CHECK(pick_batch(c, policy) == ids{2, 4, 1});
}

TEST_CASE("talker rows: a prompt that does not fit waits, smaller work after it still goes", "[scheduler]") {
    auto policy = roomy;
    policy.max_rows = 128;
    const std::vector<batch_candidate> c = {running(100ms), fresh(100), fresh(40), running(0ms), fresh(20)};
    // 100 rows, then 40 does not fit (140), 20 does (120), then the two running jobs (122).
    CHECK(pick_batch(c, policy) == ids{1, 4, 3, 0});
}

TEST_CASE("nothing to pick gives an empty batch", "[scheduler]") {
    CHECK(pick_batch({}, roomy).empty());
    const std::vector<batch_candidate> c = {running(3000ms)};
    CHECK(pick_batch(c, roomy).empty());
}

}  // namespace
}  // namespace megatts

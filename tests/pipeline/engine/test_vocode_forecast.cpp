#include "pipeline/engine/vocode_forecast.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

const clock::time_point t0 = clock::time_point(1h);

TEST_CASE("no forecast before a call was recorded, nor for no items", "[forecast]") {
    vocode_forecast f;
    CHECK_FALSE(f.due(t0, 8).has_value());
    f.record(0, 3ms);     // a call of no items tells nothing
    f.record(8, 0ms);     // nor one the GPU did not time
    CHECK_FALSE(f.due(t0, 8).has_value());
    f.record(8, 3ms);
    CHECK_FALSE(f.due(t0, 0).has_value());
    CHECK(f.due(t0, 8) == t0 + 3ms);
}

TEST_CASE("fewer items than the last call: its time scaled down; more: its time", "[forecast]") {
    vocode_forecast f;
    f.record(100, 4ms);
    CHECK(f.due(t0, 50) == t0 + 2ms);
    CHECK(f.due(t0, 1) == t0 + 40us);
    // More items take longer than the last call did: the forecast stays on the early side.
    CHECK(f.due(t0, 120) == t0 + 4ms);
    // The last call recorded is the one that counts.
    f.record(10, 1ms);
    CHECK(f.due(t0, 100) == t0 + 1ms);
    CHECK(f.due(t0, 5) == t0 + 500us);
}

}  // namespace
}  // namespace megatts

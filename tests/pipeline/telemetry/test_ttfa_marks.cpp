#include "pipeline/telemetry/ttfa_marks.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

using namespace std::chrono_literals;

TEST_CASE("the nine marks have their fixed names, in pipeline order", "[telemetry]") {
    const char* names[] = {"received",    "tokenized", "admitted",     "prefill_done", "first_code0",
                           "first_frame", "first_pcm", "first_packet", "first_sent"};
    for (std::size_t i = 0; i < k_ttfa_mark_count; ++i) CHECK(ttfa_mark_name(k_ttfa_marks[i]) == names[i]);
}

TEST_CASE("a mark keeps its first time", "[telemetry]") {
    ttfa_marks m;
    const auto t0 = ttfa_marks::clock::now();
    CHECK_FALSE(m.ms_after_received(ttfa_mark::first_sent));
    m.record(ttfa_mark::received, t0);
    m.record(ttfa_mark::first_sent, t0 + 5ms);
    m.record(ttfa_mark::first_sent, t0 + 9ms);
    CHECK(*m.ms_after_received(ttfa_mark::first_sent) == Approx(5.0));
    CHECK_FALSE(m.complete());
    for (auto mark : k_ttfa_marks) m.record(mark, t0);
    CHECK(m.complete());
}

}  // namespace
}  // namespace megatts

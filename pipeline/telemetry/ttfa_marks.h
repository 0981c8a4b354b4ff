// ttfa_marks: the monotonic timestamps of one utterance's time-to-first-audio marks
// (ttfa_mark.h).
//
// Contract: record() keeps the first time given for a mark and ignores later ones, so a stage
// may call it on every frame. A plain value: owned by one session strand; copies travel in
// events. No errors; never blocks.
#pragma once

#include <array>
#include <chrono>
#include <optional>

#include "pipeline/telemetry/ttfa_mark.h"

namespace megatts {

class ttfa_marks {
public:
    using clock = std::chrono::steady_clock;

    void record(ttfa_mark mark, clock::time_point at);
    std::optional<clock::time_point> at(ttfa_mark mark) const;
    bool complete() const;

    // Milliseconds from `received` to `mark`; nullopt while either is missing.
    std::optional<double> ms_after_received(ttfa_mark mark) const;

private:
    std::array<std::optional<clock::time_point>, k_ttfa_mark_count> at_{};
};

}  // namespace megatts

// vocode_forecast: when a step's audio, started on the GPU, will be done at the earliest, from
// the device time of the last audio call: what lets the engine choose the next step as late as
// it can without the GPU waiting for it (engine.h, choice_margin).
//
// A call's time grows with its items but less than in proportion (a vocoder call of 1 item takes
// 0.60 ms on an H200, of 64 items 3.39: a fixed part and a part per item), so the forecast takes
// the last call's time scaled down by the items' ratio for fewer items and unscaled for more:
// never later than the call will end, save for the GPU's run-to-run noise. Earlier is the safe
// side: the engine then chooses a little before it had to; later would leave the GPU idle.
//
// Contract: not thread-safe (the engine thread's). No forecast until a call was recorded, nor
// for a call of no items.
#pragma once

#include <chrono>
#include <optional>

namespace megatts {

class vocode_forecast {
public:
    using clock = std::chrono::steady_clock;

    // A finished call of `items` items that took `device` on the GPU.
    void record(int items, clock::duration device);
    // The earliest end of a call of `items` items started at `started`.
    std::optional<clock::time_point> due(clock::time_point started, int items) const;

private:
    int items_ = 0;  // of the last call recorded; 0: none
    clock::duration device_{};
};

}  // namespace megatts

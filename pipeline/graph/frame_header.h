// frame_header: what every frame carries besides its payload: whose it is, which utterance it
// belongs to, and when it was made.
//
// Contract: a plain value. `epoch` is the session's cancel generation when the frame was made:
// cancel bumps the session's epoch, and frame_queue drops data and control frames of older
// epochs at dequeue. `context` is the utterance's id within the session (0: none, e.g. a
// cancel). `created` is the monotonic time the frame's content came to exist; stages read
// time-to-first-audio marks off it.
#pragma once

#include <chrono>
#include <cstdint>

namespace megatts {

struct frame_header {
    std::uint64_t session = 0;
    std::uint32_t epoch = 0;
    std::uint32_t context = 0;
    std::chrono::steady_clock::time_point created{};
};

}  // namespace megatts

// frame_queue: the bounded queue in front of a session's strand, in two lanes (pipecat's
// priority tiers, bounded): a system lane served first and an ordered lane for data and
// control frames.
//
// Limits and overflow policies (named per queue by its owner, frame_queue_limits):
//   ordered lane  at most `ordered` frames; a push into a full lane is refused (push() returns
//                 false, the frame is not queued) and the producer decides: the session turns
//                 it into queue_full for the client, the engine asks has_room() before it
//                 computes a frame and so never meets a full lane.
//   system lane   at most `system` frames, sized so that its producers cannot fill it (cancel
//                 requests coalesce; the engine sends a bounded number of marks and errors per
//                 utterance). System frames are never dropped by the queue; a push into a full
//                 system lane is refused like any other and is a producer's bug, which the
//                 producer reports as internal.
// Stale frames: pop(epoch) discards data and control frames whose epoch is older than the
// given one as it meets them (frame_class.h), so a cancel takes effect at the next dequeue
// without walking the queue.
//
// Thread: push(), has_room(), pop() and size() from any thread (one mutex, held for O(1)).
// Never blocks beyond that mutex; no errors besides a refused push. The optional depth gauge
// follows the number of queued frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "pipeline/graph/frame.h"
#include "pipeline/telemetry/gauge.h"

namespace megatts {

struct frame_queue_limits {
    std::size_t system = 0;
    std::size_t ordered = 0;
};

class frame_queue {
public:
    explicit frame_queue(frame_queue_limits limits, gauge* depth = nullptr);
    ~frame_queue();
    frame_queue(const frame_queue&) = delete;
    frame_queue& operator=(const frame_queue&) = delete;

    [[nodiscard]] bool push(frame f);
    // Whether `n` more ordered frames fit.
    bool has_room(std::size_t n) const;
    // The next system frame, else the next ordered frame of `epoch` or newer.
    std::optional<frame> pop(std::uint32_t epoch);
    std::size_t size() const;

private:
    void count(double delta);

    frame_queue_limits limits_;
    gauge* depth_;
    mutable std::mutex mutex_;
    std::deque<frame> system_;
    std::deque<frame> ordered_;
};

}  // namespace megatts

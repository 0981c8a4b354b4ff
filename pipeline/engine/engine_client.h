// engine_client: the engine's view of the session that owns a job: where the job's output goes
// and whether the session can take more. The session implements it.
//
// Contract: every method is called on the engine thread and must return at once: no blocking,
// no waiting for the session's strand. current() is also asked from any thread that calls
// engine::submit() at the slot limit, so it must be thread-safe (atomics only). current() and
// ready_for_frames() are asked before each step; a step's frames are delivered only after
// ready_for_frames(n) said yes, and the engine never delivers more than the n ordered frames it
// asked room for: k_frames_per_step, plus k_frames_in_flight while the job's last frame is still
// being vocoded (the engine schedules the next step while the GPU computes that audio, and
// delivers it before the next step's frames). So the session's bounded output queue never
// overflows. System frames (marks, errors) go to its system lane, bounded per utterance.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pipeline/graph/frame.h"

namespace megatts {

// Ordered frames one engine step may deliver: codec_frame, pcm_block, and end_of_audio when the
// step ends the utterance.
inline constexpr std::size_t k_frames_per_step = 3;
// Ordered frames of a step whose audio the engine is still computing: codec_frame, pcm_block.
inline constexpr std::size_t k_frames_in_flight = 2;

class engine_client {
public:
    virtual ~engine_client() = default;

    // False once the session cancelled `epoch` or closed: the engine drops the job.
    virtual bool current(std::uint32_t epoch) const = 0;
    // Room for `frames` more ordered frames, and the session is not stalled (backpressure).
    virtual bool ready_for_frames(std::size_t frames) const = 0;
    // Queues f for the session and wakes it to take it.
    virtual void deliver(frame f) = 0;
    // Queues f without waking the session (the queue's room counts it at once): the session
    // takes it at the next wake() or deliver(). Waking a session costs the engine thread a
    // hand-off to another thread; the engine queues a step's frames and wakes their sessions
    // while the GPU runs the next step, instead of keeping the GPU idle meanwhile.
    virtual void queue(frame f) = 0;
    virtual void wake() = 0;
};

}  // namespace megatts

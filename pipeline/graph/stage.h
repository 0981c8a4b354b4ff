// stage: one job of a session's graph (tokenize, resample, encode, ...) as pipecat's
// FrameProcessor, minus its unbounded queues: a stage is called with one frame at a time and
// emits zero or more frames downstream, synchronously.
//
// Contract for every stage:
//   - process() runs on the session's strand, one call at a time (no lock needed inside);
//     it must not block and must not throw.
//   - It handles the frames it knows and forwards every other frame unchanged, in order, so a
//     stage never swallows a frame it does not understand (system frames above all).
//   - Failures become an error_report frame emitted downstream, never an exception.
//   - Cancel: a stage belongs to one utterance; the session discards the utterance's stages when
//     it is cancelled, so a stage holds no state that outlives its utterance.
// Each stage's header states its input and output frames.
#pragma once

#include <string_view>

#include "pipeline/graph/frame.h"

namespace megatts {

class frame_emitter {
public:
    virtual void emit(frame f) = 0;

protected:
    ~frame_emitter() = default;
};

class stage {
public:
    virtual ~stage() = default;
    virtual std::string_view name() const = 0;
    virtual void process(frame f, frame_emitter& out) = 0;
};

}  // namespace megatts

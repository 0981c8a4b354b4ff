// frame: the unit that flows through a session's stage graph: a header (frame_header.h) and one
// payload from a closed set in three classes (frame_class.h, data_frames.h, control_frames.h,
// system_frames.h). Bounded by construction: the set is fixed at compile time, so every stage
// can handle or forward every frame.
//
// Contract: a movable value; a frame belongs to one thread at a time (the engine thread that
// made it, a queue, then the session's strand). class_of() is pure.
#pragma once

#include <variant>

#include "pipeline/graph/control_frames.h"
#include "pipeline/graph/data_frames.h"
#include "pipeline/graph/frame_header.h"
#include "pipeline/graph/system_frames.h"

namespace megatts {

using frame_payload = std::variant<
    // data
    text_chunk, text_tokens, codec_frame, pcm_block, opus_packet_frame, pcm16_block,
    // control
    utterance_start, end_of_text, end_of_audio,
    // system
    cancel_request, error_report, mark_report>;

struct frame {
    frame_header header;
    frame_payload payload;
};

inline frame_class class_of(const frame& f) {
    return std::visit([](const auto& p) { return std::decay_t<decltype(p)>::klass; }, f.payload);
}

}  // namespace megatts

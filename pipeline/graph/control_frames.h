// control_frames: the payloads of the control class (frame_class.h): an utterance's lifecycle,
// ordered with its data.
//
// Contract: plain values, moved between stages and across threads inside a frame.
#pragma once

#include <chrono>
#include <cstdint>

#include "pipeline/graph/frame_class.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/session/utterance_options.h"
#include "pipeline/synthesis/utterance.h"

namespace megatts {

// Opens an utterance (the frame's context) with the client's options.
struct utterance_start {
    static constexpr frame_class klass = frame_class::control;
    utterance_options options;
};

// No more text for the utterance: flush or end.
struct end_of_text {
    static constexpr frame_class klass = frame_class::control;
};

// The engine is done with the utterance: every codec frame and PCM block came before this.
struct end_of_audio {
    static constexpr frame_class klass = frame_class::control;
    stop_reason stop = stop_reason::eos;
    text_layout layout = text_layout::non_streaming;
    int text_tokens = 0;
    int frames = 0;
    std::int64_t samples = 0;                        // at the vocoder's 24 kHz
    std::chrono::steady_clock::duration compute{};  // engine time spent on the utterance
};

}  // namespace megatts

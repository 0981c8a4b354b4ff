// session_limits: the bounds of one session (every queue bounded, DESIGN.md §1), from the
// daemon's config.
//
// Contract: a plain value; tts_service::create() rejects values out of the stated ranges.
#pragma once

#include <cstddef>

namespace megatts {

struct session_limits {
    // Bytes of text one utterance may receive in all (>= 1). Bounds tokenizer and engine state.
    std::size_t max_text_bytes = 4096;
    // Utterances started and not done, beyond the one being synthesised (>= 0).
    int max_queued_utterances = 4;
    // Calls (start/text/flush/end) waiting for the session's strand (>= 4); past it a call
    // fails with queue_full and changes nothing.
    int input_queue_frames = 256;
    // Audio handed to the transport and not yet written, in ms (>= 80, one frame); past it the
    // session is not scheduled and the client gets a stall event.
    int soft_queue_ms = 500;
};

}  // namespace megatts

// system_frames: the payloads of the system class (frame_class.h): served before queued data,
// never dropped.
//
// Contract: plain values, moved across threads inside a frame.
#pragma once

#include "pipeline/graph/frame_class.h"
#include "pipeline/session/session_error.h"
#include "pipeline/telemetry/ttfa_mark.h"

namespace megatts {

// Stop everything of epochs older than the frame's epoch.
struct cancel_request {
    static constexpr frame_class klass = frame_class::system;
};

// A failure of the frame's utterance (context), which ends it.
struct error_report {
    static constexpr frame_class klass = frame_class::system;
    session_error error;
};

// A time-to-first-audio mark of the frame's utterance, stamped at the frame's `created` time by
// a stage that runs off the session's strand (the engine).
struct mark_report {
    static constexpr frame_class klass = frame_class::system;
    ttfa_mark mark = ttfa_mark::received;
};

}  // namespace megatts

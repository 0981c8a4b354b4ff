// wire_events: the protocol's form (PROTOCOL.md §4, §5) of what the pipeline's session reports
// (pipeline/session/session_events.h).
//
// Contract: pure translations. Opus audio is timed on the 48 kHz Opus clock on the wire,
// while the session counts it at the 24 kHz it was coded from: wire_timestamp converts.
// Stop reasons: eos -> end; max_frames and the runaway guard -> max_frames. The done event's
// trace is utterance_trace.h's.
// Any thread; never blocks.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/protocol/server_event.h"
#include "pipeline/session/session_events.h"

namespace megatts {

started_event to_started_event(const utterance_started& started);

metrics_event to_metrics_event(const utterance_metrics& metrics);

// The done event of an utterance that ran to its end (not cancelled, not failed).
done_event to_done_event(const utterance_done& done, std::int64_t messages);

// The audio header timestamp of a sample position of an utterance in `format` at `sample_rate`.
std::uint32_t wire_timestamp(audio_format format, int sample_rate, std::int64_t sample);

}  // namespace megatts

// utterance_trace: one utterance's Chrome trace (the `trace` of its done event, PROTOCOL.md §5,
// and the file `serve --trace DIR` writes): {"traceEvents": [...], ...}, which opens in Perfetto
// and chrome://tracing.
//
// Events: complete events (ph "X", ts and dur in microseconds from the utterance's `received`)
// under pid = the utterance's context, on four named threads:
//   tid 1 "TTFA stages"   one span per stage of the TTFA breakdown (each mark minus the one before);
//   tid 2 "engine"        per engine step the utterance took part in, its generate() call as the
//                         engine thread saw it (args: step, batch, rows, prefill);
//   tid 4 "engine: audio" the same steps' audio, from start_vocode() to finish_vocode()'s return
//                         (its own row: the next step's generate() overlaps it);
//   tid 3 "GPU"           the calls' device time, where the backend measured it (CUDA events).
// Steps are those of the first k_traced_steps frames (step_trace.h); "otherData" says how many
// the utterance had in all. Metadata events (ph "M") name the process and the rows (the GPU
// row only where there are device times).
//
// Contract: a pure function; any thread; never fails (missing marks leave their stages out).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "pipeline/telemetry/step_trace.h"
#include "pipeline/telemetry/ttfa_marks.h"

namespace megatts {

struct utterance_trace {
    std::uint64_t session = 0;
    std::uint32_t context = 0;
    ttfa_marks marks;
    std::span<const step_trace> steps;
    int frames = 0;  // the utterance's frames, traced or not
};

std::string utterance_trace_json(const utterance_trace& trace);

}  // namespace megatts

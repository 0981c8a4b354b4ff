// session_utterance: one utterance as its session's strand tracks it, from its start frame to
// done (or failure): its stages, its engine job, its TTFA marks and its audio still in the
// transport.
//
// Contract: a plain record, owned by session_core and touched only on the session's strand.
// `ids` holds the template ids released before the job exists (bounded by max_text_bytes);
// afterwards they go straight to the job.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pipeline/engine/engine_job.h"
#include "pipeline/graph/stage_chain.h"
#include "pipeline/session/utterance_options.h"
#include "pipeline/telemetry/step_trace.h"
#include "pipeline/telemetry/ttfa_marks.h"

namespace megatts {

struct session_utterance {
    std::uint32_t epoch = 0;
    std::uint32_t context = 0;
    utterance_options options;
    int sample_rate = 0;                   // of the chunks sent
    int piece_samples = 0;                 // PCM fed to `output` at a time (output_stages.h); 0: blocks
    std::unique_ptr<stage_chain> input;    // tokenize
    std::unique_ptr<stage_chain> output;   // [resample], encode
    std::vector<std::int32_t> ids;
    bool text_closed = false;
    std::shared_ptr<engine_job> job;
    std::optional<end_of_audio> engine_end;  // set once the engine is done with it
    ttfa_marks marks;
    std::vector<step_trace> steps;  // traced only: the first k_traced_steps engine steps
    std::uint32_t next_sequence = 0;
    int chunks_out = 0;     // handed to the transport, receipt not back yet
    bool finished = false;  // done or failed; removed once no chain of it is running
};

}  // namespace megatts

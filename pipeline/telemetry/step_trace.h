// step_trace: what one engine step did, as a traced utterance's Chrome trace shows it (serve
// --trace, the start's `trace` flag): its batch and the spans of its two backend calls on the
// host's steady clock, with the GPU's own times inside them where the backend measures them
// (CUDA events, kernels/cuda/launch_timer.h).
//
// Contract: plain values. The engine makes one per step that holds a traced job and shares it
// (read-only) with every traced job of the step, for each job's first k_traced_steps frames;
// the rest of a job's steps are only counted (its frame count), so a trace stays bounded.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/cuda/launch_timer.h"

namespace megatts {

inline constexpr int k_traced_steps = 64;

struct backend_call {
    // Around the call, on the engine thread (vocode: from start_vocode() to finish_vocode()'s
    // return, which the next step's generate() overlaps).
    host_span host;
    std::optional<host_span> device;  // the GPU work inside it, when the backend measures it
    int items = 0;                    // batch size of the call
};

struct step_trace {
    std::uint64_t step = 0;  // the engine's step counter, from 1
    int rows = 0;            // talker rows of the generate() call
    int prefill = 0;         // items whose prompt ran in this step (prefill_in_step backends)
    backend_call generate, vocode;
};

}  // namespace megatts

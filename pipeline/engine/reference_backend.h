// reference_backend: the engine's CPU backend: per slot a ref::generator (talker + code
// predictor, kernels/reference/generator.h) and a reference vocoder stream, exactly as
// synthesize() runs them, so that an utterance's codes and samples are bit-identical to
// `megatts say` whatever else is in the batch.
//
// Contract: engine_backend.h. open() runs the prefill at once (prefill_in_step is false);
// generate() and vocode() run their items one after another in the given order. Nothing here
// fails but the vocoder on codes out of range; failed() is always false. The model must
// outlive the backend.
#pragma once

#include <memory>

#include "pipeline/engine/engine_backend.h"
#include "pipeline/synthesis/reference_model.h"

namespace megatts {

// slots >= 1; max_positions bounds each utterance's prompt + frames (0: unbounded) so that the
// CPU backend refuses what the CUDA one would.
std::unique_ptr<engine_backend> make_reference_backend(const reference_model& model, int slots, int max_positions);

}  // namespace megatts

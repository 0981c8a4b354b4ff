// cuda_backend: the engine's CUDA backend: the talker and code predictor of every item of a
// batch in ONE megakernel launch per step (kernels/megakernel/megakernel.h), the prompt
// entering the model in the slot's first launch (the session joins the running batch at the
// next frame); the vocoder still the CPU reference per slot (reference_vocoder_bank.h) until the
// batched CUDA vocoder plugs in behind vocode().
//
// Contract: engine_backend.h. create() uploads the checkpoint's bf16 weights to device 0 and
// allocates `slots` KV caches of `max_positions` positions; it fails with the megakernel's
// named error when CUDA cannot run the model (no device, no kernel image for this GPU, no
// compiled shape for its dimensions, out of memory). The caller checks the device first to say
// why in its own words. Limits: at most 64 items and 128 talker rows per generate() (a new
// slot's whole prompt is its rows), top_k 1..64 when sampling (open() refuses others with
// invalid_input). A CUDA error leaves failed() true. create() on any thread (the process's
// threads share the device's primary context); every other call on the engine thread, which
// owns the backend. The model must outlive the backend.
#pragma once

#include <memory>

#include "kernels/common/result.h"
#include "pipeline/engine/engine_backend.h"
#include "pipeline/synthesis/reference_model.h"

namespace megatts {

result<std::unique_ptr<engine_backend>> make_cuda_backend(const reference_model& model, int slots, int max_positions);

}  // namespace megatts

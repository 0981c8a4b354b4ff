// cuda_backend: the engine's CUDA backend: the talker and code predictor of every item of a
// batch in ONE megakernel launch per step (kernels/megakernel/megakernel.h), the prompt
// entering the model in the slot's first launch (the session joins the running batch at the
// next frame); the frames of every item vocoded in ONE batched CUDA vocoder call
// (kernels/vocoder/cuda_vocoder.h), each slot's causal vocoder state admitted with the slot.
//
// Contract: engine_backend.h. create() uploads the checkpoint's bf16 weights to device 0 and
// allocates `slots` KV caches of `max_positions` positions, then uploads the vocoder's f32
// weights with `slots` vocoder state slots and captures its graphs; it fails with the megakernel's
// named error when CUDA cannot run the model (no device, no kernel image for this GPU, no
// compiled shape for its dimensions, out of memory). The caller checks the device first to say
// why in its own words. Limits: at most 128 items and 256 talker rows per generate() (a new
// slot's whole prompt is its rows, at most 128), top_k 1..64 when sampling (open() refuses
// others with invalid_input). A CUDA error leaves failed() true. Each frame launch is timed
// with CUDA events (launch_timer.h): last_device_span() after generate(); none after vocode()
// while the vocoder runs on the CPU. create() on any thread (the process's
// threads share the device's primary context); every other call on the engine thread, which
// owns the backend. The model must outlive the backend.
#pragma once

#include <memory>

#include "kernels/common/result.h"
#include "pipeline/engine/engine_backend.h"
#include "pipeline/synthesis/reference_model.h"

namespace megatts {

// vocoder_tf32: the vocoder's decoder-block 7-tap convs take TF32 operands on Hopper
// (cuda_vocoder_limits::tf32_convs); false: f32-accurate products everywhere.
result<std::unique_ptr<engine_backend>> make_cuda_backend(const reference_model& model, int slots, int max_positions,
                                                          bool vocoder_tf32 = true);

}  // namespace megatts

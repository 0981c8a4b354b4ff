// cuda_frame_vocoder: one utterance's samples from the CUDA vocoder (one slot, one frame per
// call), for `megatts say --backend cuda`. The daemon's engine vocodes many sessions per
// call instead (pipeline/engine/cuda_backend.h).
//
// Contract: frame_vocoder.h. create() uploads the vocoder's f32 weights to device 0 and
// fails with the CUDA vocoder's named error when CUDA cannot run them (no device, no kernel
// image, shapes the kernels cannot run, out of memory). The weights are read only during
// create(). The thread that creates it must be the one that uses it.
#pragma once

#include <memory>

#include "kernels/common/result.h"
#include "pipeline/synthesis/frame_vocoder.h"

namespace megatts {

result<std::unique_ptr<frame_vocoder>> make_cuda_frame_vocoder(const ref::vocoder_weights& weights);

}  // namespace megatts

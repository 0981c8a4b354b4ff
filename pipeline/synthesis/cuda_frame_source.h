// cuda_frame_source: one utterance's frames from the CUDA megakernel (one slot, one
// session per launch), for `megatts say --backend cuda`. The daemon's engine batches
// many sessions per launch instead.
//
// Contract: create() uploads the checkpoint's weights to device 0 and fails with the
// megakernel's named error when CUDA cannot run them (no device, no kernel image,
// dimensions of no compiled shape, top_k outside 1..64). The checkpoint is read only
// during create(). Blocking; the thread that creates it must be the one that uses it.
#pragma once

#include <memory>

#include "kernels/common/result.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/synthesis/frame_source.h"

namespace megatts {

result<std::unique_ptr<frame_source>> make_cuda_frame_source(const checkpoint& c,
                                                             const ref::generation_options& options);

}  // namespace megatts

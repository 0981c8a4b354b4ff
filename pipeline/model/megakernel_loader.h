// megakernel_loader: the bf16 tensor views the CUDA megakernel uploads, taken from a
// validated checkpoint (pointers into its memory map; no copy).
//
// Contract: the views stay valid while the checkpoint lives; megakernel::create()
// copies them to the device, after which the checkpoint may go. Pure; no errors
// (checkpoint::open() validated every name, shape and dtype).
#pragma once

#include "kernels/megakernel/megakernel.h"
#include "pipeline/model/checkpoint.h"

namespace megatts {

megakernel_tensors megakernel_tensors_from(const checkpoint& c);

// The token policy of the official generate() for this model (generation_setup.h).
megakernel_policy megakernel_policy_from(const model_config& config);

}  // namespace megatts

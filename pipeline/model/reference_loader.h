// reference_loader: fills the CPU reference backend's f32 weights (kernels/reference
// weights.h) from a validated checkpoint.
//
// Contract: reads only tensors of the tensor-name table, which checkpoint::open()
// has already checked, so the only failures are allocation-sized: none are expected
// and none are reported. Blocking (converts ~0.9 G parameters at full 0.6B size);
// call from a loading thread, never an event loop.
#pragma once

#include "kernels/reference/weights.h"
#include "pipeline/model/checkpoint.h"

namespace megatts {

ref::talker_weights load_talker_weights(const checkpoint& c);
ref::code_predictor_weights load_code_predictor_weights(const checkpoint& c);

}  // namespace megatts

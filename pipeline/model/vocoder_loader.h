// vocoder_loader: builds the fp32 reference vocoder's weights (kernels/reference/
// vocoder/vocoder_weights.h) from a validated checkpoint's speech tokenizer.
//
// Contract: reads only decoder tensors of the tensor-name table, which
// checkpoint::open() has checked for presence, shape and dtype, so no error is
// expected; a tensor that still fails to convert is reported by name. Precomputes
// what the official decoder recomputes per call (codebook vectors, SnakeBeta
// exponentials) and rearranges conv weights into the decoder's layouts. Blocking
// (converts ~114 M parameters, about 460 MB, at full size); call from a loading
// thread, never an event loop. The result is read-only and may be shared by any
// number of streams.
#pragma once

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_weights.h"
#include "pipeline/model/checkpoint.h"

namespace megatts {

result<ref::vocoder_weights> load_vocoder_weights(const checkpoint& c);

}  // namespace megatts

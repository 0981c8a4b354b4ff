// vocoder_cost: what one frame of one session costs the speech-tokenizer decoder,
// counted from the weights' shapes: the arithmetic, the weight bytes a batched call
// streams once whatever its size, and the bytes each session adds (its state and its
// activations). The benchmark divides measured times by these.
//
// Contract: pure; plain C++ (both builds). FLOPs count 2 per multiply-add of every
// conv, linear map, transposed conv and depthwise conv, and of the attention over a
// full window (a session past its first `sliding_window` frames); elementwise work
// (SnakeBeta, norms, GELU, softmax) is not counted. Bytes are the compulsory ones of
// the CUDA vocoder's data flow: each tensor written once and read once per reader.
#pragma once

#include <string>
#include <vector>

#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts {

struct vocoder_stage_cost {
    std::string name;     // the official module name ("pre_transformer", "decoder.3", ...)
    double flops = 0;     // per session-frame
    double weight_bytes = 0;
};

struct vocoder_cost {
    double flops = 0;               // per session-frame
    double weight_bytes = 0;        // per call: every weight, streamed whole
    double state_bytes = 0;         // per session-frame: keys and values of the window, conv history rows, codebook rows
    double activation_bytes = 0;    // per session-frame: intermediate tensors written and read back, audio out
    std::vector<vocoder_stage_cost> stages;

    // Bytes of one call of `batch` items.
    double call_bytes(int batch) const { return weight_bytes + batch * (state_bytes + activation_bytes); }
};

vocoder_cost count_vocoder_cost(const ref::vocoder_weights& w);

}  // namespace megatts

// sliding_window_attention: the vocoder pre-transformer's self-attention for one layer
// of one stream: q/k/v projections (no bias, no QK-norm), RoPE in the rotate_half
// layout, causal attention over a sliding window, o-projection.
//
// Contract: run(x, pos) takes n rows of dims.hidden values (the layer's normed input)
// at positions pos .. pos + n - 1 and returns n rows of o_proj output, valid until
// the next run(). The query at position p sees the keys j with p - window < j <= p
// (window keys, itself included); the layer keeps the last window - 1 keys and values
// between calls, so successive calls must pass consecutive positions from 0. The
// weights must outlive the object. Single-threaded (one stream); no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/common/model_dims.h"
#include "kernels/reference/vocoder/left_context.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

class sliding_window_attention {
public:
    sliding_window_attention(const pre_transformer_layer_weights& w, const transformer_dims& dims,
                             int window);

    std::span<const float> run(std::span<const float> x, int pos);

private:
    const pre_transformer_layer_weights* w_;
    transformer_dims dims_;
    int window_;
    left_context keys_, values_;  // the last window - 1 positions, then this call's
    std::vector<float> q_, k_, v_, ctx_, scores_, out_;
};

}  // namespace megatts::ref

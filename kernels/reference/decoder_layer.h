// decoder_layer: one Qwen3 pre-norm decoder layer applied to one new position, with
// its KV cache: RMSNorm, q/k/v projections, per-head QK RMSNorm (before RoPE), RoPE,
// causal GQA attention over every cached position, o-projection and residual, then
// RMSNorm, SwiGLU MLP and residual. Used by the talker and the code predictor.
//
// Contract: step() appends this position's K and V to `cache` and updates `x` (the
// residual stream, dims.hidden floats) in place. The position is cache.positions().
// An optional trace receives the layer's intermediates for this position (golden
// diffs). Single-threaded; no errors (shapes were validated at load).
#pragma once

#include <vector>

#include "kernels/common/model_dims.h"
#include "kernels/reference/weights.h"

namespace megatts::ref {

class kv_layer_cache {
public:
    int positions() const { return positions_; }
    void clear() { k_.clear(), v_.clear(), positions_ = 0; }
    void append(const float* k, const float* v, int kv_width);
    const float* k(int pos, int kv_width) const { return k_.data() + static_cast<long>(pos) * kv_width; }
    const float* v(int pos, int kv_width) const { return v_.data() + static_cast<long>(pos) * kv_width; }

private:
    std::vector<float> k_, v_;  // [positions, kv_width]
    int positions_ = 0;
};

// The intermediates of one layer at one position, named as in the golden files.
struct layer_trace {
    std::vector<float> input_norm, q, k, v, attn_ctx, attn_o, after_attn_residual, mlp_out, out;
};

void decoder_layer_step(const decoder_layer_weights& w, const transformer_dims& dims,
                        kv_layer_cache& cache, float* x, layer_trace* trace = nullptr);

}  // namespace megatts::ref

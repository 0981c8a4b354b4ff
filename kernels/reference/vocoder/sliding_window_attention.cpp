#include "kernels/reference/vocoder/sliding_window_attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/reference/ops.h"
#include "kernels/reference/vocoder/dense_rows.h"

namespace megatts::ref {

sliding_window_attention::sliding_window_attention(const pre_transformer_layer_weights& w,
                                                   const transformer_dims& dims, int window)
    : w_(&w),
      dims_(dims),
      window_(window),
      keys_(window - 1, dims.kv_width()),
      values_(window - 1, dims.kv_width()),
      scores_(static_cast<std::size_t>(window)) {}

std::span<const float> sliding_window_attention::run(std::span<const float> x, int pos) {
    const int hd = dims_.head_dim, qw = dims_.q_width(), kvw = dims_.kv_width();
    const int rows = static_cast<int>(x.size() / static_cast<std::size_t>(dims_.hidden));
    dense_map(w_->q, x, q_);
    dense_map(w_->k, x, k_);
    dense_map(w_->v, x, v_);
    for (int r = 0; r < rows; ++r) {
        for (int h = 0; h < dims_.heads; ++h)
            apply_rope(q_.data() + static_cast<std::size_t>(r) * qw + h * hd, hd, pos + r, dims_.rope_theta);
        for (int h = 0; h < dims_.kv_heads; ++h)
            apply_rope(k_.data() + static_cast<std::size_t>(r) * kvw + h * hd, hd, pos + r, dims_.rope_theta);
    }
    // Row i of keys/values holds position pos - (window - 1) + i; rows before
    // position 0 are the context's initial zeros and are never visible.
    const float* keys = keys_.extend(k_).data();
    const float* values = values_.extend(v_).data();
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    const int group = dims_.heads / dims_.kv_heads;
    ctx_.assign(static_cast<std::size_t>(rows) * qw, 0.f);
    for (int r = 0; r < rows; ++r) {
        const int first = std::max(r, window_ - 1 - pos), last = window_ - 1 + r;
        const int count = last - first + 1;
        for (int h = 0; h < dims_.heads; ++h) {
            const float* q = q_.data() + static_cast<std::size_t>(r) * qw + h * hd;
            const std::size_t kv_offset = static_cast<std::size_t>(h / group) * hd;
            for (int i = 0; i < count; ++i)
                scores_[i] = dot(q, keys + static_cast<std::size_t>(first + i) * kvw + kv_offset, hd) * scale;
            softmax(scores_.data(), count);
            float* out = ctx_.data() + static_cast<std::size_t>(r) * qw + h * hd;
            for (int i = 0; i < count; ++i) {
                const float* v = values + static_cast<std::size_t>(first + i) * kvw + kv_offset;
                for (int d = 0; d < hd; ++d) out[d] += scores_[i] * v[d];
            }
        }
    }
    dense_map(w_->o, ctx_, out_);
    return out_;
}

}  // namespace megatts::ref

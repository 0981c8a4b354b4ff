#include "kernels/reference/vocoder/pre_transformer.h"

#include <cstddef>

#include "kernels/reference/ops.h"
#include "kernels/reference/vocoder/dense_rows.h"

namespace megatts::ref {
namespace {

// h += scale (per channel) * delta, over rows of scale.size() channels.
void add_scaled(std::vector<float>& h, const std::vector<float>& scale, std::span<const float> delta) {
    const std::size_t width = scale.size();
    for (std::size_t row = 0; row < h.size(); row += width)
        for (std::size_t c = 0; c < width; ++c) h[row + c] += scale[c] * delta[row + c];
}

}  // namespace

pre_transformer::pre_transformer(const pre_transformer_weights& w, const transformer_dims& dims, int window)
    : w_(&w), dims_(dims) {
    for (const auto& layer : w.layers) attention_.emplace_back(layer, dims, window);
}

void pre_transformer::norm_rows(const std::vector<float>& weight) {
    const int width = dims_.hidden;
    normed_.resize(h_.size());
    for (std::size_t row = 0; row < h_.size(); row += width)
        rms_norm(h_.data() + row, weight.data(), width, dims_.rms_eps, normed_.data() + row);
}

std::span<const float> pre_transformer::run(std::span<const float> x, const vocoder_observer& observe) {
    dense_map(w_->input_proj, x, h_);
    if (observe) observe({vocoder_stage::pt_input_proj, 0, dims_.hidden, h_});
    for (std::size_t l = 0; l < w_->layers.size(); ++l) {
        const auto& layer = w_->layers[l];
        norm_rows(layer.input_norm);
        add_scaled(h_, layer.attn_scale, attention_[l].run(normed_, position_));
        norm_rows(layer.post_norm);
        dense_map(layer.gate, normed_, gate_);
        dense_map(layer.up, normed_, up_);
        for (std::size_t i = 0; i < gate_.size(); ++i) gate_[i] = silu(gate_[i]) * up_[i];
        dense_map(layer.down, gate_, mlp_);
        add_scaled(h_, layer.mlp_scale, mlp_);
        if (observe) observe({vocoder_stage::pt_layer, static_cast<int>(l), dims_.hidden, h_});
    }
    norm_rows(w_->norm);
    dense_map(w_->output_proj, normed_, out_);
    position_ += static_cast<int>(h_.size() / static_cast<std::size_t>(dims_.hidden));
    return out_;
}

}  // namespace megatts::ref

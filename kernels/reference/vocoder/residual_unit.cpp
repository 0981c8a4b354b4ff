#include "kernels/reference/vocoder/residual_unit.h"

#include <cstddef>

#include "kernels/reference/vocoder/dense_rows.h"
#include "kernels/reference/vocoder/snake_beta.h"

namespace megatts::ref {

residual_unit::residual_unit(const residual_unit_weights& w, int dilation)
    : w_(&w), conv1_(w.conv1, dilation) {}

std::span<const float> residual_unit::run(std::span<const float> x) {
    act_.assign(x.begin(), x.end());
    snake_beta(w_->act1, act_);
    const std::span<float> hidden = conv1_.run(act_);
    snake_beta(w_->act2, hidden);
    dense_map(w_->conv2, hidden, out_);
    for (std::size_t i = 0; i < out_.size(); ++i) out_[i] += x[i];
    return out_;
}

}  // namespace megatts::ref

#include "kernels/reference/vocoder/convnext_upsampler.h"

#include <cstddef>

#include "kernels/reference/ops.h"
#include "kernels/reference/vocoder/dense_rows.h"

namespace megatts::ref {
namespace {

int depthwise_taps(const upsampler_weights& w) {
    return static_cast<int>(w.dw_weight.size() / w.dw_bias.size());
}

}  // namespace

convnext_upsampler::convnext_upsampler(const upsampler_weights& w)
    : w_(&w),
      channels_(static_cast<int>(w.dw_bias.size())),
      up_(w.up.phases, 1),
      dw_context_(depthwise_taps(w) - 1, channels_) {}

std::span<const float> convnext_upsampler::run(std::span<const float> x) {
    const std::size_t c_count = static_cast<std::size_t>(channels_);
    const int taps = depthwise_taps(*w_);
    // The phases of input row t are output rows t*ratio .. t*ratio + ratio - 1.
    const std::span<const float> up = up_.run(x);
    const std::size_t rows = up.size() / c_count;
    const float* padded = dw_context_.extend(up).data();

    dw_.resize(up.size());
    for (std::size_t r = 0; r < rows; ++r) {
        float* y = dw_.data() + r * c_count;
        for (std::size_t c = 0; c < c_count; ++c) y[c] = w_->dw_bias[c];
        for (int k = 0; k < taps; ++k) {
            const float* xk = padded + (r + k) * c_count;
            const float* wk = w_->dw_weight.data() + k * c_count;
            for (std::size_t c = 0; c < c_count; ++c) y[c] += wk[c] * xk[c];
        }
        layer_norm(y, w_->norm_weight.data(), w_->norm_bias.data(), channels_, convnext_norm_eps, y);
    }
    dense_map(w_->pw1, dw_, hidden_);
    for (float& v : hidden_) v = gelu_erf(v);
    dense_map(w_->pw2, hidden_, out_);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < c_count; ++c)
            out_[r * c_count + c] = up[r * c_count + c] + w_->gamma[c] * out_[r * c_count + c];
    return out_;
}

}  // namespace megatts::ref

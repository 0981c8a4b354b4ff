#include "kernels/reference/vocoder/causal_conv.h"

#include <cstddef>

#include "kernels/reference/vocoder/dense_rows.h"

namespace megatts::ref {

causal_conv::causal_conv(const dense_weights& w, int dilation)
    : w_(&w), dilation_(dilation), context_((w.taps - 1) * dilation, w.in) {}

std::span<float> causal_conv::run(std::span<const float> x) {
    const int rows = static_cast<int>(x.size() / static_cast<std::size_t>(w_->in));
    const auto padded = context_.extend(x);
    out_.resize(static_cast<std::size_t>(rows) * w_->out);
    dense_rows(*w_, padded.data(), dilation_, rows, out_.data());
    return out_;
}

}  // namespace megatts::ref

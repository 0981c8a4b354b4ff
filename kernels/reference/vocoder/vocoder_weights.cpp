#include "kernels/reference/vocoder/vocoder_weights.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace megatts::ref {

dense_weights dense_from_conv(std::span<const float> weight, std::span<const float> bias, int out, int in,
                              int taps) {
    dense_weights d{taps, in, out, std::vector<float>(weight.size()), {bias.begin(), bias.end()}};
    for (int k = 0; k < taps; ++k)
        for (int c = 0; c < in; ++c)
            for (int o = 0; o < out; ++o)
                d.weight[(static_cast<std::size_t>(k) * in + c) * out + o] =
                    weight[(static_cast<std::size_t>(o) * in + c) * taps + k];
    return d;
}

dense_weights dense_concat_inputs(const dense_weights& a, const dense_weights& b) {
    // With one tap the layout is [in][out], so stacking inputs is appending rows.
    dense_weights d{1, a.in + b.in, a.out, a.weight, {}};
    d.weight.insert(d.weight.end(), b.weight.begin(), b.weight.end());
    return d;
}

transposed_conv_weights transposed_conv_from_conv(std::span<const float> weight, std::span<const float> bias,
                                                  int in, int out, int kernel, int stride) {
    const int taps = kernel / stride;
    const int width = stride * out;
    transposed_conv_weights tc{stride, {taps, in, width, std::vector<float>(weight.size()), {}}};
    // Output row t*s + i takes kernel tap i + j*s of input row t - j; dense tap k
    // reads input row t - (taps - 1 - k).
    for (int k = 0; k < taps; ++k) {
        const int j = taps - 1 - k;
        for (int c = 0; c < in; ++c)
            for (int i = 0; i < stride; ++i)
                for (int o = 0; o < out; ++o)
                    tc.phases.weight[(static_cast<std::size_t>(k) * in + c) * width + i * out + o] =
                        weight[(static_cast<std::size_t>(c) * out + o) * kernel + i + j * stride];
    }
    for (int i = 0; i < stride; ++i) tc.phases.bias.insert(tc.phases.bias.end(), bias.begin(), bias.end());
    return tc;
}

std::vector<float> depthwise_from_conv(std::span<const float> weight, int channels, int taps) {
    std::vector<float> w(weight.size());
    for (int c = 0; c < channels; ++c)
        for (int k = 0; k < taps; ++k)
            w[static_cast<std::size_t>(k) * channels + c] = weight[static_cast<std::size_t>(c) * taps + k];
    return w;
}

snake_weights snake_from_log(std::span<const float> log_alpha, std::span<const float> log_beta) {
    snake_weights s;
    for (float a : log_alpha) s.alpha.push_back(std::exp(a));
    // The official module's epsilon: it keeps 1/beta finite when exp(log beta) underflows.
    for (float b : log_beta) s.inv_beta.push_back(1.0f / (std::exp(b) + 1e-9f));
    return s;
}

void append_codebook(std::span<const float> embedding_sum, std::span<const float> cluster_usage, int dim,
                     std::vector<float>& codebooks) {
    for (std::size_t code = 0; code < cluster_usage.size(); ++code) {
        // Rarely used codes have a usage near zero; the clamp keeps their vectors finite.
        const float usage = std::max(cluster_usage[code], 1e-5f);
        for (int i = 0; i < dim; ++i) codebooks.push_back(embedding_sum[code * dim + i] / usage);
    }
}

}  // namespace megatts::ref

// convnext_upsampler: one of the vocoder's upsample.k stages for one stream: a causal
// ConvTranspose (kernel = stride = ratio), then a ConvNeXt block (depthwise causal
// conv, LayerNorm over channels, pwconv1, exact GELU, pwconv2, gamma, residual).
//
// Contract: run(x) takes n rows of C channels (time-major) and returns n * ratio
// rows of C channels, valid until the next run(). The depthwise conv keeps its left
// context between calls, so chunked calls give the rows of one pass over the whole.
// The weights must outlive the object. Single-threaded (one stream); no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/reference/vocoder/causal_conv.h"
#include "kernels/reference/vocoder/left_context.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

// The LayerNorm epsilon, fixed by the official ConvNeXt block, not read from the
// config (the CUDA vocoder reads it here too).
inline constexpr float convnext_norm_eps = 1e-6f;

class convnext_upsampler {
public:
    explicit convnext_upsampler(const upsampler_weights& w);

    std::span<const float> run(std::span<const float> x);

private:
    const upsampler_weights* w_;
    int channels_;
    causal_conv up_;
    left_context dw_context_;
    std::vector<float> dw_, hidden_, out_;
};

}  // namespace megatts::ref

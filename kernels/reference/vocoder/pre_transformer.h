// pre_transformer: the vocoder's transformer over frames, for one stream: input_proj,
// the layers (RMSNorm, sliding-window attention, layer-scaled residual, RMSNorm,
// SwiGLU MLP, layer-scaled residual), final RMSNorm and output_proj.
//
// Contract: run(x) takes the next n frames as n rows of latent values (pre_conv
// output, time-major) and returns n rows of latent values, valid until the next
// run(). Positions continue across calls (the first call starts at 0), so a stream
// decoded in chunks gives the rows of one pass over the whole utterance. Reports
// pt_input_proj and pt_layer stages to `observe` when it is set. The weights must
// outlive the object. Single-threaded (one stream); no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/common/model_dims.h"
#include "kernels/reference/vocoder/sliding_window_attention.h"
#include "kernels/reference/vocoder/vocoder_stage.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

class pre_transformer {
public:
    pre_transformer(const pre_transformer_weights& w, const transformer_dims& dims, int window);

    std::span<const float> run(std::span<const float> x, const vocoder_observer& observe);

private:
    void norm_rows(const std::vector<float>& weight);  // normed_ = RMSNorm(h_)

    const pre_transformer_weights* w_;
    transformer_dims dims_;
    std::vector<sliding_window_attention> attention_;
    int position_ = 0;
    std::vector<float> h_, normed_, gate_, up_, mlp_, out_;
};

}  // namespace megatts::ref

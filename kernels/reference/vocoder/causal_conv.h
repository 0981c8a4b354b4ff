// causal_conv: one causal conv of a decoding stream together with its left context,
// so that a stream cut into chunks gives the outputs of one pass over the whole.
// A causal transposed conv is the same object over transposed_conv_weights::phases.
//
// Contract: run(x) takes n rows of w.in values (time-major) and returns n rows of
// w.out values, valid until the next run(). The weights must outlive the object.
// Single-threaded (one stream); no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/reference/vocoder/left_context.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

class causal_conv {
public:
    causal_conv(const dense_weights& w, int dilation);

    std::span<float> run(std::span<const float> x);

private:
    const dense_weights* w_;
    int dilation_;
    left_context context_;
    std::vector<float> out_;
};

}  // namespace megatts::ref

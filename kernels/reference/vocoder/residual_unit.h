// residual_unit: one residual unit of a vocoder decoder block for one stream:
// SnakeBeta, causal conv (kernel 7, the given dilation), SnakeBeta, 1x1 conv, plus
// the unit's input.
//
// Contract: run(x) takes n rows of C channels (time-major) and returns n rows of C
// channels, valid until the next run(). The dilated conv keeps its left context
// between calls. The weights must outlive the object. Single-threaded (one stream);
// no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/reference/vocoder/causal_conv.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

class residual_unit {
public:
    residual_unit(const residual_unit_weights& w, int dilation);

    std::span<const float> run(std::span<const float> x);

private:
    const residual_unit_weights* w_;
    causal_conv conv1_;
    std::vector<float> act_, out_;
};

}  // namespace megatts::ref

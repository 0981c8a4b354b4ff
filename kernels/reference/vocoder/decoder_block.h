// decoder_block: one of the vocoder's decoder.b stages (b = 1..4) for one stream:
// SnakeBeta, causal ConvTranspose (kernel 2r, stride r, the right r outputs trimmed),
// then residual units with dilations 1, 3 and 9.
//
// Contract: run(x) takes n rows of the block's input channels (time-major) and
// returns n * r rows of its output channels, valid until the next run(). Every conv
// keeps its left context between calls, so chunked calls give the rows of one pass
// over the whole. The weights must outlive the object. Single-threaded (one
// stream); no errors.
#pragma once

#include <array>
#include <span>
#include <tuple>
#include <vector>

#include "kernels/reference/vocoder/causal_conv.h"
#include "kernels/reference/vocoder/residual_unit.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

// The residual units' dilations, fixed by the official decoder block, not read from
// the config (the CUDA vocoder reads them here too).
inline constexpr std::array<int, 3> residual_dilations = {1, 3, 9};
static_assert(residual_dilations.size() == std::tuple_size_v<decltype(decoder_block_weights::units)>);

class decoder_block {
public:
    explicit decoder_block(const decoder_block_weights& w);

    std::span<const float> run(std::span<const float> x);

private:
    const decoder_block_weights* w_;
    std::vector<float> act_;
    causal_conv up_;
    std::vector<residual_unit> units_;
};

}  // namespace megatts::ref

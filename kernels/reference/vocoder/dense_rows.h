// dense_rows: the one matrix kernel of the reference vocoder. It computes rows of a
// causal conv, a linear map or a causal transposed conv's phases (see dense_weights).
//
// Contract: for r < rows and o < w.out,
//   y[r * w.out + o] = bias[o] + sum_{k < taps, c < in} w.weight[(k * in + c) * out + o]
//                                                      * x[(r + k * dilation) * in + c]
// x holds rows + (taps - 1) * dilation rows of w.in values, left context first; y
// holds rows * w.out values and must not alias x. Every output is accumulated in one
// fixed order (bias, then taps, then input channels) whatever `rows`, so an output
// does not depend on how a stream was cut into chunks. With w.operand_bits < 24, x's and
// w.weight's values are rounded to that many significant bits (round_operand) in each
// product; bias and sums are not.
// Single-threaded; dense_rows does not allocate; no errors.
#pragma once

#include <span>
#include <vector>

#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

void dense_rows(const dense_weights& w, const float* x, int dilation, int rows, float* y);

// v rounded to `bits` significant bits (1..24), to nearest, ties away from zero; infinities
// and NaNs unchanged, a value that rounds past the largest finite float becomes infinite.
float round_operand(float v, int bits);

// A layer without taps (linear map, 1x1 conv) over x.size() / w.in rows; y is resized
// to rows * w.out.
void dense_map(const dense_weights& w, std::span<const float> x, std::vector<float>& y);

}  // namespace megatts::ref

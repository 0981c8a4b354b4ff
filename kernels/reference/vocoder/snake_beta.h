// snake_beta: the decoder's periodic activation, x + inv_beta * sin(alpha * x)^2 per
// channel (snake_weights holds alpha and inv_beta already exponentiated).
//
// Contract: applies it in place to time-major rows of s.alpha.size() channels
// (x.size() a multiple of that). Pure; single-threaded; no errors.
#pragma once

#include <span>

#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

void snake_beta(const snake_weights& s, std::span<float> x);

}  // namespace megatts::ref

// sin_squared: sin(y)^2, the periodic term of the decoder's SnakeBeta activation, as the
// CUDA vocoder's epilogues compute it (gemm_epilogue.cuh) for every output element of
// the decoder blocks' convs: cheaper than squaring sinf, which evaluates two polynomials
// and selects between them by quadrant. sin^2 has period pi, so the quadrant's parity
// alone picks sin(r)^2 or cos(r)^2 = 1 - sin(r)^2 of the reduced argument, and one
// polynomial serves both.
//
// Contract: pure; callable from host and device code. For |y| <= 105615 (the range of
// sinf's own fast path) y is reduced by pi/2 (k = rint(2y / pi), r = y - k pi/2 with pi/2
// split into two floats, each step an FMA) and sin(r) is a minimax odd polynomial on
// [-pi/4, pi/4]; beyond that range, and for NaN or infinities, sinf(y)^2. Within 2e-7 of
// the exact value (1.3e-7 on tests/kernels/vocoder's sweep; the CPU reference's float
// std::sin squared is within 9e-8 there).
#pragma once

#include <cmath>

#include "kernels/common/host_device.h"

namespace megatts::voc {

MEGATTS_HD float sin_squared(float y) {
    if (!(std::fabs(y) <= 105615.0f)) {
        const float s = std::sin(y);
        return s * s;
    }
    const float k = std::rint(y * 0.636619772f);  // 2 / pi
    // pi / 2 = 1.57079637f - 4.37113883e-8f to 2e-15: in range, k x 2e-15 is below 2e-10.
    float r = std::fma(k, -1.57079637f, y);
    r = std::fma(k, 4.37113883e-8f, r);
    const float r2 = r * r;
    float p = std::fma(r2, -1.9515295891e-4f, 8.3321608736e-3f);
    p = std::fma(p, r2, -1.6666654611e-1f);
    const float s = std::fma(p * r2, r, r);
    const float s2 = s * s;
    return (static_cast<int>(k) & 1) != 0 ? 1.0f - s2 : s2;
}

}  // namespace megatts::voc

// sampling_math: the arithmetic of token sampling that the CPU reference and the CUDA
// sampler must share bit for bit: a counter-based RNG (Philox4x32-10) and an exp()
// built only from operations IEEE 754 rounds identically on both (multiply, fmaf,
// rintf, bit moves), so identical logits and counters give identical tokens.
//
// Contract: header-only, pure, usable from host and device code. No state.
#pragma once

#include <cstdint>
#include <cstring>
#include <math.h>  // rintf, fmaf: the same functions host and device code call

#include "kernels/common/host_device.h"

namespace megatts {

// One Philox4x32-10 block: 128 random bits for a (key, counter) pair. Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3" (SC'11); constants from the paper.
struct philox_block {
    std::uint32_t v[4];
};

MEGATTS_HD std::uint32_t philox_mulhi(std::uint32_t a, std::uint32_t b, std::uint32_t* lo) {
    std::uint64_t p = static_cast<std::uint64_t>(a) * b;
    *lo = static_cast<std::uint32_t>(p);
    return static_cast<std::uint32_t>(p >> 32);
}

MEGATTS_HD philox_block philox4x32_10(std::uint64_t key, std::uint32_t c0, std::uint32_t c1,
                                      std::uint32_t c2, std::uint32_t c3) {
    std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    std::uint32_t x0 = c0, x1 = c1, x2 = c2, x3 = c3;
    for (int round = 0; round < 10; ++round) {
        std::uint32_t lo0, lo1;
        std::uint32_t hi0 = philox_mulhi(0xD2511F53u, x0, &lo0);
        std::uint32_t hi1 = philox_mulhi(0xCD9E8D57u, x2, &lo1);
        std::uint32_t y0 = hi1 ^ x1 ^ k0, y1 = lo1, y2 = hi0 ^ x3 ^ k1, y3 = lo0;
        x0 = y0, x1 = y1, x2 = y2, x3 = y3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return {{x0, x1, x2, x3}};
}

// A uniform float in [0, 1) with 24 random bits.
MEGATTS_HD float uniform_from_bits(std::uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1p-24f; }

// exp(x) for x <= 0 (logit minus max), relative error ~2e-7, identical on host and
// device. Below -87 it returns 0: such a token has no weight next to the maximum.
MEGATTS_HD float sampling_exp(float x) {
    if (x < -87.0f) return 0.0f;
    float t = x * 1.44269504088896341f;  // log2(e)
    float n = rintf(t);
    float f = t - n;  // in [-0.5, 0.5]
    // 2^f by its Taylor series in f*ln2 (degree 7), Horner with fused multiply-adds.
    float p = 1.52527338e-5f;
    p = fmaf(p, f, 1.54035304e-4f);
    p = fmaf(p, f, 1.33335581e-3f);
    p = fmaf(p, f, 9.61812911e-3f);
    p = fmaf(p, f, 5.55041087e-2f);
    p = fmaf(p, f, 2.40226507e-1f);
    p = fmaf(p, f, 6.93147181e-1f);
    p = fmaf(p, f, 1.0f);
    int e = static_cast<int>(n) + 127;
    if (e <= 0) return 0.0f;
    std::uint32_t bits = static_cast<std::uint32_t>(e) << 23;
    float scale;
#if defined(__CUDA_ARCH__)
    scale = __uint_as_float(bits);
#else
    std::memcpy(&scale, &bits, sizeof scale);
#endif
    return p * scale;
}

// Which draw of an utterance a random number belongs to: the frame and the codebook
// (0 = the talker's codebook 0, 1..15 = the code predictor's passes).
MEGATTS_HD float sampling_uniform(std::uint64_t seed, std::uint32_t frame, std::uint32_t codebook) {
    return uniform_from_bits(philox4x32_10(seed, frame, codebook, 0x6d656761u /*"mega"*/, 0u).v[0]);
}

}  // namespace megatts

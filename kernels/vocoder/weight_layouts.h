// weight_layouts: the device layouts of a vocoder matrix, built on the host at upload
// (device_weights.cu): its bf16x3 split as gemm_matrix::w_split, the B fragments of mma.sync
// (conv_gemm.cuh's multiply_half), and as gemm_matrix::w_cores, the core matrices of Hopper's
// wgmma (wgmma.cuh), both giving each k its bf16x3 slot of slot_order.h, as A's fragments do;
// and for the products that multiply TF32 operands, gemm_matrix::w_tf32's core matrices.
//
// Contract: pure host C++ (CI's unit tests build it without CUDA). `padded` is [k_steps x
// 32][n_pad] f32, row-major, zero past K and N; `Word` is an aggregate of four uint32 (uint4
// for the device). The split is split_bf16x2's on the device: hi = the bf16 rounding of x,
// lo = the bf16 rounding of x - hi. Layouts (16-byte words):
// - split_layout: [k_steps x 2 halves of 16 k][n_pad][t = 0..3], word {hi (k, k + 4), hi (k
//   + 8, k + 12), lo (k, k + 4), lo (k + 8, k + 12)} for k = 16 half + t, the pairs packed
//   low = first: lane (g, t)'s two B registers of each product for column g, adjacent.
// - core_layout: [k_steps][n_pad / 8][plane: hi, lo][4 cores of 8 slots][8 columns], word =
//   the column's 8 bf16 of the core's slots: an unswizzled K-major core matrix per 128 bytes.
// - tf32_core_layout, where wgmma multiplies TF32 operands instead (conv_implicit.cuh's 7-tap
//   residual convs): [k_steps][n_pad / 8][8 cores of 4 k][8 columns], word = the column's 4
//   consecutive k (4 core .. 4 core + 3), each W rounded to TF32 (tf32_bits): the same bytes a
//   k-step and column as core_layout's, so a tile's k-step is one run of the same length.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/vocoder/slot_order.h"

namespace megatts::voc {

// f32 to bf16, rounded to nearest even, as __floats2bfloat162_rn does (the weights are
// finite; a NaN would not survive the split anyway).
inline std::uint16_t bf16_bits(float x) {
    const auto u = std::bit_cast<std::uint32_t>(x);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float bf16_value(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// x's hi (plane 0) or lo (plane 1) bf16.
inline std::uint16_t bf16_plane(float x, int plane) {
    const std::uint16_t hi = bf16_bits(x);
    return plane == 0 ? hi : bf16_bits(x - bf16_value(hi));
}

inline std::uint32_t bf16_pair(std::uint16_t first, std::uint16_t second) {
    return first | static_cast<std::uint32_t>(second) << 16;
}

// x rounded to TF32's 11 significant bits, to nearest, ties away from zero (the device's
// cvt.rna.tf32.f32), as f32 bits; the weights are finite.
inline std::uint32_t tf32_bits(float x) {
    return (std::bit_cast<std::uint32_t>(x) + 0x1000u) & ~0x1fffu;
}

template <class Word>
std::vector<Word> split_layout(const std::vector<float>& padded, int k_steps, int n_pad) {
    std::vector<Word> out(static_cast<std::size_t>(k_steps) * 2 * n_pad * 4);
    auto at = [&](int k, int n) { return padded[static_cast<std::size_t>(k) * n_pad + n]; };
    for (int c = 0; c < 2 * k_steps; ++c)
        for (int n = 0; n < n_pad; ++n)
            for (int t = 0; t < 4; ++t) {
                const int k = 16 * c + t;
                std::uint32_t w[4];
                for (int plane = 0; plane < 2; ++plane)
                    for (int q = 0; q < 2; ++q)
                        w[2 * plane + q] =
                            bf16_pair(bf16_plane(at(k + 8 * q, n), plane), bf16_plane(at(k + 8 * q + 4, n), plane));
                out[(static_cast<std::size_t>(c) * n_pad + n) * 4 + t] = Word{w[0], w[1], w[2], w[3]};
            }
    return out;
}

template <class Word>
std::vector<Word> core_layout(const std::vector<float>& padded, int k_steps, int n_pad) {
    std::vector<Word> out(static_cast<std::size_t>(k_steps) * n_pad * 8);
    std::size_t at = 0;
    for (int s = 0; s < k_steps; ++s)
        for (int group = 0; group < n_pad / 8; ++group)
            for (int plane = 0; plane < 2; ++plane)
                for (int core = 0; core < 4; ++core)
                    for (int r = 0; r < 8; ++r) {
                        std::uint16_t v[8];
                        for (int e = 0; e < 8; ++e) {
                            const int k = 32 * s + 16 * (core / 2) + slot_k(8 * (core % 2) + e);
                            v[e] = bf16_plane(padded[static_cast<std::size_t>(k) * n_pad + 8 * group + r], plane);
                        }
                        out[at++] = Word{bf16_pair(v[0], v[1]), bf16_pair(v[2], v[3]), bf16_pair(v[4], v[5]),
                                         bf16_pair(v[6], v[7])};
                    }
    return out;
}

template <class Word>
std::vector<Word> tf32_core_layout(const std::vector<float>& padded, int k_steps, int n_pad) {
    std::vector<Word> out(static_cast<std::size_t>(k_steps) * n_pad * 8);
    std::size_t at = 0;
    for (int s = 0; s < k_steps; ++s)
        for (int group = 0; group < n_pad / 8; ++group)
            for (int core = 0; core < 8; ++core)
                for (int r = 0; r < 8; ++r) {
                    std::uint32_t v[4];
                    for (int e = 0; e < 4; ++e)
                        v[e] = tf32_bits(padded[static_cast<std::size_t>(32 * s + 4 * core + e) * n_pad + 8 * group + r]);
                    out[at++] = Word{v[0], v[1], v[2], v[3]};
                }
    return out;
}

}  // namespace megatts::voc

// implicit_staging: what conv_implicit.cuh stages per tile, as the host sizes it too.
// A tile of an implicit conv stages a 32-channel chunk of every input row it needs: its
// own rows, and before each session's run of rows in it the (taps - 1) x dilation rows
// of that session's left context.
//
// Contract: pure; callable from host and device code.
#pragma once

#include "kernels/vocoder/gemm_shape.h"

namespace megatts::voc {

inline constexpr int k_implicit_chunk = k_gemm_k_step;  // channels staged at a time
// Fewer taps reuse a staged row too few times to pay for the staging's two block barriers
// per chunk: on an H100 at B = 64 the 2-tap transposed convs and the 3-tap pre-conv were
// slower as implicit GEMMs (the first decoder block's 169 -> 195 us), the 7-tap residual
// convs faster (the last block's 371 -> 265-280 us; Nsight Compute, kernels one by one).
inline constexpr int k_implicit_min_taps = 4;
// bf16 between two rows of a plane: 80 bytes, so that the 8 row addresses of an ldmatrix
// phase (consecutive rows) fall in 8 distinct 16-byte bank groups.
inline constexpr int k_implicit_plane_stride = 40;

// The rows staged for a tile whose rows m0..m0 + valid - 1 are the call's (n rows per
// frame, so rows of different items where n is not a multiple of the tile's rows).
__host__ __device__ inline int staged_rows_of_tile(int m0, int valid, int n, int halo) {
    const int runs = (m0 + valid - 1) / n - m0 / n + 1;
    return valid + runs * halo;
}

}  // namespace megatts::voc

// implicit_staging: which input rows conv_implicit.cuh stages per tile, and where each
// comes from, as the kernel reads them and the host sizes them. A tile's rows m0..m0 +
// valid - 1 (n rows per frame) fall into runs, one per item whose rows the tile holds
// (consecutive times of one session); a tile stages a 32-channel chunk of every input row
// it needs: for each run in turn, the halo = (taps - 1) x dilation rows of that session's
// left context and then the run's own rows. So run j starts at staged row first_j + j x
// halo (first_j: its first tile row), and tile row r reads, for tap k, staged row
// tap0_staged_row(r) + k x dilation: the row (taps - 1 - k) x dilation rows before it.
//
// Contract: pure; callable from host and device code (tests/kernels/vocoder checks the
// addressing against its definition on the CPU).
#pragma once

#include "kernels/common/host_device.h"
#include "kernels/vocoder/gemm_shape.h"

namespace megatts::voc {

inline constexpr int k_implicit_chunk = k_gemm_k_step;  // channels staged at a time
// One tap reuses no staged row. With mma.sync the 2-tap transposed convs were slower as
// implicit GEMMs (an H100 at B = 64: the first decoder block's 169 -> 195 us); on wgmma with
// five weight stages they are not (decoder blocks 1-4 151 / 155 / 170 / 169 -> 155 / 140 /
// 157 / 166 us; Nsight Compute, kernels one by one), and the 7-tap residual convs gained
// most (the last block's 371 -> 265-280 us with mma.sync).
inline constexpr int k_implicit_min_taps = 2;
// bf16 between two rows of a plane: 80 bytes, so that the 8 row addresses of an ldmatrix
// phase (consecutive rows) fall in 8 distinct 16-byte bank groups.
inline constexpr int k_implicit_plane_stride = 40;

// One tile's staging: its first row, its rows within the call (>= 1), rows per frame,
// and the left context per run.
struct tile_staging {
    int m0, valid, n, halo;
};

// The rows staged for a tile.
MEGATTS_HD int staged_rows_of_tile(int m0, int valid, int n, int halo) {
    const int runs = (m0 + valid - 1) / n - m0 / n + 1;
    return valid + runs * halo;
}

MEGATTS_HD int staged_rows(const tile_staging& s) { return staged_rows_of_tile(s.m0, s.valid, s.n, s.halo); }

// The first tile row of run j.
MEGATTS_HD int run_first_row(const tile_staging& s, int j) {
    const int first = (s.m0 / s.n + j) * s.n - s.m0;
    return first > 0 ? first : 0;
}

// The run that staged row i (< staged_rows()) belongs to: run j ends where run j + 1's
// staged rows begin.
MEGATTS_HD int staged_run(const tile_staging& s, int i) {
    int j = 0;
    for (;;) {
        const int next_first = (s.m0 / s.n + j + 1) * s.n - s.m0;
        if (next_first >= s.valid || i < next_first + (j + 1) * s.halo) return j;
        ++j;
    }
}

// The time of staged row i of run j in its session, whose item decodes frame `frame`
// (negative: the zero padding before the session's start).
MEGATTS_HD long staged_time(const tile_staging& s, int i, int j, int frame) {
    const int first = run_first_row(s, j);
    return static_cast<long>(frame) * s.n + (s.m0 + first) % s.n - s.halo + (i - first - j * s.halo);
}

// The staged row that tile row r reads for tap 0. Rows past the call's (r >= valid) read
// the last row's: their results are never stored.
MEGATTS_HD int tap0_staged_row(const tile_staging& s, int r) {
    const int last = s.m0 + s.valid - 1, m = s.m0 + r < last ? s.m0 + r : last;
    return (m - s.m0) + (m / s.n - s.m0 / s.n) * s.halo;
}

}  // namespace megatts::voc

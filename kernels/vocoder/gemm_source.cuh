// gemm_source: where conv_gemm's A operand comes from. Row m of a layer's product is
// row m % n of item m / n (n rows per frame); column k = tap * channels + c is input
// channel c of the row (taps - 1 - tap) * dilation rows earlier in that session, read
// from its ring, or zero before the session's start (the causal zero padding).
//
// Contract: pure; callable from host code too. source_row() resolves row m once per
// tile (-1 time: past the call's M rows, all zeros), source_column() column k once per
// k-step (its tap and channel are the same in every row: not per element, which at
// B = 64 was most of the decoder convs' instructions), column_cursor the next k-step's
// from the last one's without a division;
// source_offset() is the element offset of (row, column) from the view's data, or -1
// for a zero (k >= K, or a time before 0). A flat source has taps == 1
// (vocoder_program checks).
#pragma once

#include "kernels/vocoder/gemm_params.h"

namespace megatts::voc {

struct gemm_row {
    long base;  // offset of the slot's ring, or of the flat row itself
    int time;   // -1: no row
    int index;  // time mod ring_rows; 0 for a flat row
};

__host__ __device__ inline gemm_row source_row(const gemm_params& p, int m, int M) {
    const act_view& v = p.a.view;
    if (m >= M) return {0, -1, 0};
    if (v.ring_rows == 0) return {static_cast<long>(m) * v.width, 0, 0};
    const int n = p.rows_per_frame;
    const item_desc& it = p.batch->items[m / n];
    const long t = static_cast<long>(it.frame) * n + m % n;
    return {it.slot * v.slot_stride, static_cast<int>(t), static_cast<int>(t % v.ring_rows)};
}

// Column k: input channel c of tap `tap`, the row `shift` rows earlier; shift -1: past K.
struct gemm_column {
    int shift;
    int c;
    int tap;
};

__host__ __device__ inline gemm_column source_column(const gemm_params& p, int k) {
    const gemm_source& a = p.a;
    if (k >= p.b.K) return {-1, 0, 0};
    const int tap = k / a.channels;
    return {(a.taps - 1 - tap) * a.dilation, k - tap * a.channels, tap};
}

// source_column() of k, k + dk, k + 2 dk, ... in turn, with one division for the first.
struct column_cursor {
    gemm_column col;
    int k;

    __host__ __device__ column_cursor(const gemm_params& p, int k0) : col(source_column(p, k0)), k(k0) {}

    __host__ __device__ void advance(const gemm_params& p, int dk) {
        k += dk;
        if (k >= p.b.K) {
            col = {-1, 0, 0};
            return;
        }
        for (col.c += dk; col.c >= p.a.channels; col.c -= p.a.channels) {
            ++col.tap;
            col.shift -= p.a.dilation;
        }
    }
};

__host__ __device__ inline gemm_column tap_column(const gemm_params& p, int tap) {
    return {(p.a.taps - 1 - tap) * p.a.dilation, 0, tap};
}

__host__ __device__ inline long source_offset(const gemm_params& p, const gemm_row& row, gemm_column col) {
    // time -1 (no row) or shift -1 (past K) or a time before the session's start: zero.
    if (col.shift < 0 || row.time - col.shift < 0) return -1;
    int index = row.index - col.shift;
    if (index < 0) index += p.a.view.ring_rows;  // shift <= history < ring_rows: one wrap at most
    return row.base + static_cast<long>(index) * p.a.view.width + col.c;
}

}  // namespace megatts::voc

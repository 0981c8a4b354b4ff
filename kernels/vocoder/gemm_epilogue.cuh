// gemm_epilogue: what conv_gemm does with a finished pair of outputs (row m,
// columns n and n + 1): the fused elementwise tail of each decoder layer, so no
// layer needs a kernel of its own for bias, activation, residual or SnakeBeta.
//
// Contract (device): resolve_row() is called once per output row m < M of a tile, and
// finish_pair() exactly once per (m, even n < N) with that row and the full sums;
// `row_scale` is the row's 1/rms when epi.row_norm is set. The order of operations is
// the reference's (kernels/reference/vocoder): RMS scale, bias, activation, then `res
// + scale * value`, then the stores. Pure apart from the stores; the residual is read
// before the same thread overwrites it (in place on the transformer's residual
// stream). Callable from host code too.
//
// Why rows are resolved first: finding a pair's rows from m (a division, the item's
// description read from memory, then a 64-bit modulo per view) once per pair made
// the epilogue a long dependent chain; the last split of a decoder-block product,
// which runs the epilogue for its whole tile alone, took most of the kernel's 33-48
// us at one session (Nsight Compute, H200).
#pragma once

#include "kernels/vocoder/gemm_params.h"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

__host__ __device__ inline float snake_beta(float x, float alpha, float inv_beta) {
    const float s = sinf(x * alpha);
    return x + inv_beta * (s * s);
}

__host__ __device__ inline float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__host__ __device__ inline float silu(float x) { return x / (1.0f + expf(-x)); }

// Every view's width is even and its rows 8-byte aligned (vocoder_program checks),
// so a full pair is one 8-byte store.
__host__ __device__ inline void put_pair(float* row, int c, float v0, float v1, bool second) {
    if (second)
        *reinterpret_cast<float2*>(row + c) = make_float2(v0, v1);
    else
        row[c] = v0;
}

// q to the call's flat q rows; k and v to the slot's rings at the frame's position.
__host__ __device__ inline void finish_qkv(const gemm_epilogue& e, const item_desc& it, int i, int n, float v0,
                                           float v1) {
    const int q = e.q_width, kv = e.kv_width;
    if (n >= q + kv) {
        put_pair(view_row(e.values, it, i, 1, 0), n - q - kv, v0, v1, true);
        return;
    }
    const bool is_q = n < q;
    const int col = is_q ? n : n - q;
    const int half = e.head_dim / 2;
    const int head = col / e.head_dim, j = (col - head * e.head_dim) / 2;
    // The reference's angle: f32(position) * f32(inv_freq), then f32 cos and sin.
    const float angle = static_cast<float>(it.frame) * load_const(e.inv_freq + j);
    const float cs = cosf(angle), sn = sinf(angle);
    float* row = view_row(is_q ? e.out : e.keys, it, i, 1, 0) + head * e.head_dim;
    row[j] = v0 * cs - v1 * sn;
    row[j + half] = v1 * cs + v0 * sn;
}

// The views an epilogue row addresses, as indices into epi_row's arrays.
enum epi_view : int { epi_out, epi_res, epi_snake, epi_views };

// One output row m of a product: its item, and for each view the offset of its
// phase-0 row (a ConvTranspose writes `phases` rows per A row) and, for a ring, that
// row's ring index.
struct epi_row {
    long base[epi_views];
    int index[epi_views];
    int item;
};

__host__ __device__ inline const act_view& epi_view_of(const gemm_epilogue& e, int which) {
    return which == epi_out ? e.out : which == epi_res ? e.res : e.snake_out;
}

__host__ __device__ inline epi_row resolve_row(const gemm_params& p, int m) {
    const gemm_epilogue& e = p.epi;
    const int n_in = p.rows_per_frame, n_out = n_in * e.phases;
    const int i = m / n_in, r_in = m - i * n_in;
    const item_desc& it = p.batch->items[i];
    epi_row row{};
    row.item = i;
    for (int which = 0; which < epi_views; ++which) {
        const act_view& v = epi_view_of(e, which);
        if (v.ring_rows == 0) {
            row.base[which] = (static_cast<long>(i) * n_out + static_cast<long>(r_in) * e.phases) * v.width;
        } else {
            row.base[which] = it.slot * v.slot_stride;
            row.index[which] = static_cast<int>((static_cast<long>(it.frame) * n_out + static_cast<long>(r_in) * e.phases) %
                                                v.ring_rows);
        }
    }
    return row;
}

// Phase `phase` of the row in view `which`: phase < phases <= the frame's rows <= ring
// rows, so the ring index wraps once at most.
__host__ __device__ inline float* phase_row(const gemm_epilogue& e, const epi_row& row, int which, int phase) {
    const act_view& v = epi_view_of(e, which);
    if (v.ring_rows == 0) return v.data + row.base[which] + static_cast<long>(phase) * v.width;
    int index = row.index[which] + phase;
    if (index >= v.ring_rows) index -= v.ring_rows;
    return v.data + row.base[which] + static_cast<long>(index) * v.width;
}

__host__ __device__ inline void finish_pair(const gemm_params& p, const epi_row& row, int n, float v0, float v1,
                                            float row_scale) {
    const gemm_epilogue& e = p.epi;
    const bool second = n + 1 < p.b.N;
    if (e.row_norm) {
        v0 *= row_scale;
        v1 *= row_scale;
    }
    if (p.b.bias) {
        v0 += load_const(p.b.bias + n);
        if (second) v1 += load_const(p.b.bias + n + 1);
    }
    switch (e.act) {
    case gemm_act::qkv_rope: finish_qkv(e, p.batch->items[row.item], row.item, n, v0, v1); return;
    case gemm_act::silu_mul: phase_row(e, row, epi_out, 0)[n / 2] = silu(v0) * v1; return;
    case gemm_act::gelu:
        v0 = gelu_erf(v0);
        v1 = gelu_erf(v1);
        break;
    case gemm_act::none: break;
    }
    // A ConvTranspose's column n is channel c of output row r_in * phases + phase.
    const int phase = n / e.channels, c = n - phase * e.channels;
    if (e.res.data) {
        const float* res = phase_row(e, row, epi_res, phase) + c;
        v0 = load_cg(res) + (e.res_scale ? load_const(e.res_scale + c) * v0 : v0);
        if (second) v1 = load_cg(res + 1) + (e.res_scale ? load_const(e.res_scale + c + 1) * v1 : v1);
    }
    if (e.out.data) put_pair(phase_row(e, row, epi_out, phase), c, v0, v1, second);
    if (e.snake_out.data) {
        const float s0 = snake_beta(v0, load_const(e.snake_alpha + c), load_const(e.snake_inv_beta + c));
        const float s1 = second ? snake_beta(v1, load_const(e.snake_alpha + c + 1), load_const(e.snake_inv_beta + c + 1)) : 0.f;
        put_pair(phase_row(e, row, epi_snake, phase), c, s0, s1, second);
    }
}

}  // namespace megatts::voc

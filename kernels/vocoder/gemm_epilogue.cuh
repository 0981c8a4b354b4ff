// gemm_epilogue: what conv_gemm does with a finished pair of outputs (row m,
// columns n and n + 1): the fused elementwise tail of each decoder layer, so no
// layer needs a kernel of its own for bias, activation, residual or SnakeBeta.
//
// Contract (device): finish_pair() is called exactly once per (m < M, even n < N)
// with the full sums; `row_scale` is the row's 1/rms when epi.row_norm is set. The
// order of operations is the reference's (kernels/reference/vocoder): RMS scale,
// bias, activation, then `res + scale * value`, then the stores. Pure apart from the
// stores; the residual is read before the same thread overwrites it (in place on the
// transformer's residual stream). Callable from host code too.
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

__host__ __device__ inline void finish_pair(const gemm_params& p, int m, int n, float v0, float v1,
                                            float row_scale) {
    const gemm_epilogue& e = p.epi;
    const int n_in = p.rows_per_frame;
    const int i = m / n_in, r_in = m - i * n_in;
    const item_desc& it = p.batch->items[i];
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
    case gemm_act::qkv_rope: finish_qkv(e, it, i, n, v0, v1); return;
    case gemm_act::silu_mul: view_row(e.out, it, i, n_in, r_in)[n / 2] = silu(v0) * v1; return;
    case gemm_act::gelu:
        v0 = gelu_erf(v0);
        v1 = gelu_erf(v1);
        break;
    case gemm_act::none: break;
    }
    // A ConvTranspose's column n is channel c of output row r_in * phases + phase.
    const int phase = n / e.channels, c = n - phase * e.channels;
    const int n_out = n_in * e.phases, r_out = r_in * e.phases + phase;
    if (e.res.data) {
        const float* res = view_row(e.res, it, i, n_out, r_out) + c;
        v0 = load_cg(res) + (e.res_scale ? load_const(e.res_scale + c) * v0 : v0);
        if (second) v1 = load_cg(res + 1) + (e.res_scale ? load_const(e.res_scale + c + 1) * v1 : v1);
    }
    if (e.out.data) put_pair(view_row(e.out, it, i, n_out, r_out), c, v0, v1, second);
    if (e.snake_out.data) {
        const float s0 = snake_beta(v0, load_const(e.snake_alpha + c), load_const(e.snake_inv_beta + c));
        const float s1 = second ? snake_beta(v1, load_const(e.snake_alpha + c + 1), load_const(e.snake_inv_beta + c + 1)) : 0.f;
        put_pair(view_row(e.snake_out, it, i, n_out, r_out), c, s0, s1, second);
    }
}

}  // namespace megatts::voc

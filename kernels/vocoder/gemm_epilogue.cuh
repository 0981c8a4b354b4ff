// gemm_epilogue: what conv_gemm does with a finished pair of outputs (row m,
// columns n and n + 1): the fused elementwise tail of each decoder layer, so no
// layer needs a kernel of its own for bias, activation, residual or SnakeBeta.
//
// Contract (device): resolve_row() is called once per output row m < M of a tile,
// load_columns() once per column pair, and finish_pair() (or, where plain_epilogue(),
// finish_plain_pair(), which gives the same bits) exactly once per (m, even n < N) with
// that row, those columns, the pair's residual (load_residual) and the full sums;
// `row_scale` is the row's 1/rms when epi.row_norm is set. The order of operations is
// the reference's (kernels/reference/vocoder): RMS scale, bias, activation, then `res
// + scale * value`, then the stores. Pure apart from the stores; the residual is read
// before the same thread overwrites it (in place on the transformer's residual
// stream). Callable from host code too.
//
// Why rows, columns and residuals are loaded first: finding a pair's rows from m (a
// division, the item's description read from memory, then a 64-bit modulo per view)
// once per pair, and reading its parameters and residual between the previous pair's
// stores (which the compiler may not reorder across), made the epilogue a chain of
// dependent L2 reads: 7-20 us of a decoder-block product at one session (globaltimer
// stamps per block, H200).
#pragma once

#include "kernels/vocoder/gemm_params.h"
#include "kernels/vocoder/sin_squared.h"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

__host__ __device__ inline float snake_beta(float x, float alpha, float inv_beta) {
    return x + inv_beta * sin_squared(x * alpha);
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

// What a pair's epilogue reads that depends on its columns (n, n + 1) alone. A
// thread of conv_gemm keeps the same columns for all its pairs of a tile, so it
// loads these once.
struct epi_columns {
    int phase, c;  // a ConvTranspose's column n is channel c of output row r_in * phases + phase
    bool second;   // n + 1 < N
    float bias[2], res_scale[2], alpha[2], inv_beta[2];
};

__host__ __device__ inline epi_columns load_columns(const gemm_params& p, int n) {
    const gemm_epilogue& e = p.epi;
    epi_columns k{};
    k.second = n + 1 < p.b.N;
    k.phase = n / e.channels;
    k.c = n - k.phase * e.channels;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (h == 1 && !k.second) break;
        if (p.b.bias) k.bias[h] = load_const(p.b.bias + n + h);
        if (e.res_scale) k.res_scale[h] = load_const(e.res_scale + k.c + h);
        if (e.snake_out.data) {
            k.alpha[h] = load_const(e.snake_alpha + k.c + h);
            k.inv_beta[h] = load_const(e.snake_inv_beta + k.c + h);
        }
    }
    return k;
}

// The residual of a pair (zeros when the epilogue has none). Read before any store of
// the pair: on the transformer's residual stream `res` and `out` are the same rows.
__host__ __device__ inline float2 load_residual(const gemm_params& p, const epi_row& row, const epi_columns& k) {
    if (!p.epi.res.data) return make_float2(0.f, 0.f);
    const float* res = phase_row(p.epi, row, epi_res, k.phase) + k.c;
    return make_float2(load_cg(res), k.second ? load_cg(res + 1) : 0.f);
}

// Whether a product's epilogue is the decoder blocks' plain kind: no row norm, no activation,
// one phase a row, no residual scale and whole pairs (N even), so that finish_plain_pair()
// serves it. Uniform over a launch.
__host__ __device__ inline bool plain_epilogue(const gemm_params& p) {
    const gemm_epilogue& e = p.epi;
    return !e.row_norm && e.act == gemm_act::none && e.phases == 1 && !e.res_scale && p.b.N % 2 == 0;
}

// The row of view `which` of an epilogue row (phase 0): phase_row()'s address without its
// phase and its wrap, which phase 0 never needs.
__host__ __device__ inline float* plain_row(const act_view& v, const epi_row& row, int which) {
    const long index = v.ring_rows == 0 ? 0 : row.index[which];
    return v.data + row.base[which] + index * v.width;
}

// finish_pair() where plain_epilogue(p): the same operations in the same order (bias, then
// `res + value`, then the stores), without the checks and the phase arithmetic the other
// epilogues need. Why: at 64 sessions the pair loop, about 150 warp instructions a pair, was
// 67% of a decoder block's 1x1 conv's instructions and 43% of a 7-tap conv's, and those
// kernels issue-bound at two blocks an SM (Nsight Compute, H200); with this loop the 1x1
// convs took 875 -> 769 us a call, the 7-tap convs 1,655 -> 1,592.
__host__ __device__ inline void finish_plain_pair(const gemm_params& p, const epi_row& row, const epi_columns& k,
                                                  float2 res, float v0, float v1) {
    const gemm_epilogue& e = p.epi;
    if (p.b.bias) {
        v0 += k.bias[0];
        v1 += k.bias[1];
    }
    if (e.res.data) {
        v0 = res.x + v0;
        v1 = res.y + v1;
    }
    if (e.out.data) *reinterpret_cast<float2*>(plain_row(e.out, row, epi_out) + k.c) = make_float2(v0, v1);
    if (e.snake_out.data)
        *reinterpret_cast<float2*>(plain_row(e.snake_out, row, epi_snake) + k.c) =
            make_float2(snake_beta(v0, k.alpha[0], k.inv_beta[0]), snake_beta(v1, k.alpha[1], k.inv_beta[1]));
}

__host__ __device__ inline void finish_pair(const gemm_params& p, const epi_row& row, int n, const epi_columns& k,
                                            float2 res, float v0, float v1, float row_scale) {
    const gemm_epilogue& e = p.epi;
    if (e.row_norm) {
        v0 *= row_scale;
        v1 *= row_scale;
    }
    if (p.b.bias) {
        v0 += k.bias[0];
        if (k.second) v1 += k.bias[1];
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
    if (e.res.data) {
        v0 = res.x + (e.res_scale ? k.res_scale[0] * v0 : v0);
        if (k.second) v1 = res.y + (e.res_scale ? k.res_scale[1] * v1 : v1);
    }
    if (e.out.data) put_pair(phase_row(e, row, epi_out, k.phase), k.c, v0, v1, k.second);
    if (e.snake_out.data) {
        const float s0 = snake_beta(v0, k.alpha[0], k.inv_beta[0]);
        const float s1 = k.second ? snake_beta(v1, k.alpha[1], k.inv_beta[1]) : 0.f;
        put_pair(phase_row(e, row, epi_snake, k.phase), k.c, s0, s1, k.second);
    }
}

}  // namespace megatts::voc

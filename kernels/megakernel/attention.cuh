// attention: the per-head steps of a decoder layer that are not matrix products:
// QK RMSNorm + RoPE, the KV-cache append, and causal decode attention over the
// session's cache. Lane l of a warp owns dimensions l, l+32, l+64, l+96 of a head's
// 128, so each RoPE pair (d, d+64) lives in one lane; attention takes a block per
// (row, head) over a long cache (the talker) or a short one with few pairs, a warp per
// (row, head) over a short one (the code predictor's) when the pairs outnumber the blocks,
// and several blocks per (row, head) over a long cache when the pairs leave blocks idle
// (attention_parts: each walks a range of positions, the last merges). A block's walk
// reads the cache 16 bytes a lane, two positions per warp load (wide_group); a warp's
// walk, four bf16 a lane per position (kv_group).
//
// Contract (device, one warp): when several rows of one session are in a launch (a
// prompt, the code predictor's first pass), store_kv() must finish for every row
// before attend() reads the cache (a phase barrier separates them). With one row per
// session the attention warp (of part 0) appends its own row and reads only older
// positions. The parts of one (row, head) are in the same phase, and their tickets are
// zero when it begins. Angles
// are f32(pos) * inv_freq[i] with inv_freq rounded from double on the host, as the
// reference computes them.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "kernels/common/grid_barrier.cuh"
#include "kernels/megakernel/device_model.h"

namespace megatts::mk {

inline constexpr int k_head_dim = 128;

struct rope_table {
    float inv_freq[k_head_dim / 2];
};

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// A head's RMSNorm weights in the lane's dimensions (lane + 32 i), or none. Loaded before
// the phase's cache stores: the compiler may not move a load above a store that could alias
// it, and a load after them is one more round trip in the phase's chain.
struct head_norm {
    float w[4];
    bool on;
};

__device__ __forceinline__ head_norm load_head_norm(const bf16* w) {
    const int lane = threadIdx.x % 32;
    head_norm n{{1.f, 1.f, 1.f, 1.f}, w != nullptr};
    if (w)
#pragma unroll
        for (int i = 0; i < 4; ++i) n.w[i] = __bfloat162float(w[lane + 32 * i]);
    return n;
}

// v[i] holds dimension lane + 32 i. RMSNorm (when `norm.on`), then RoPE. `rope` lives in shared
// memory: lanes read different entries, which the constant cache would serve one at a time.
__device__ __forceinline__ void norm_rope(float (&v)[4], const head_norm& norm, float eps, int pos,
                                          const rope_table& rope) {
    const int lane = threadIdx.x % 32;
    if (norm.on) {
        float inv = rsqrtf(warp_sum(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) / k_head_dim + eps);
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = v[i] * inv * norm.w[i];
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        float s, c;
        sincosf(static_cast<float>(pos) * rope.inv_freq[lane + 32 * i], &s, &c);
        const float a = v[i], b = v[i + 2];
        v[i] = a * c - b * s;
        v[i + 2] = b * c + a * s;
    }
}

// Appends the current key and value (from current_kv) to cache rows k_dst / v_dst.
__device__ __forceinline__ void store_kv(const float (&k)[4], const float (&v)[4], bf16* k_dst, bf16* v_dst) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        k_dst[lane + 32 * i] = __float2bfloat16(k[i]);
        v_dst[lane + 32 * i] = __float2bfloat16(v[i]);
    }
}

// Normalises and rotates one key head and rounds key and value to bf16, as the cache
// holds them: the current position is then attended to with exactly the values a
// later position will read back.
__device__ __forceinline__ void current_kv(const float* k_src, const float* v_src, const head_norm& k_norm, float eps,
                                           int pos, const rope_table& rope, float (&k)[4], float (&v)[4]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) k[i] = k_src[lane + 32 * i];
    norm_rope(k, k_norm, eps, pos, rope);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        k[i] = __bfloat162float(__float2bfloat16(k[i]));
        v[i] = __bfloat162float(__float2bfloat16(v_src[lane + 32 * i]));
    }
}

inline constexpr int k_attn_warps = 8;
inline constexpr int k_attn_unroll = 4;  // cache positions whose loads are in flight together (a warp's walk)
// A block's walk: each load instruction of a warp reads two cache positions, one per half-warp,
// 16 bytes a lane; k_wide_loads of them are in flight together.
inline constexpr int k_wide_loads = 4;
inline constexpr int k_wide_positions = 2 * k_wide_loads;  // a warp's group of the block's walk
// A (row, head)'s walk is split over at most this many blocks, each taking at least this many
// positions (one group a warp): fewer, and the merge's round trips cost more than they save.
inline constexpr int k_max_attention_parts = 8;
inline constexpr int k_attention_part_positions = k_attn_warps * k_wide_positions;

struct attention_smem {
    float m[k_attn_warps];
    float l[k_attn_warps];
    float acc[k_attn_warps][k_head_dim];
};

// One head's 128 values of a row (lane l: dimensions l, l+32, l+64, l+96).
__device__ __forceinline__ void load_head(const float* src, float (&v)[4]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = src[lane + 32 * i];
}

// A group of k_attn_unroll cache positions of one head, as a warp reads them.
struct kv_group {
    float k[k_attn_unroll][4], v[k_attn_unroll][4];
};

// Positions j0 .. j0 + k_attn_unroll - 1 of the cache (those < pos; nothing when j0 >= pos).
__device__ __forceinline__ void load_group(kv_group& g, const bf16* k_base, const bf16* v_base, long row_stride, int j0,
                                           int pos) {
    if (j0 >= pos) return;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int u = 0; u < k_attn_unroll; ++u)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long at = (j0 + u < pos ? j0 + u : j0) * row_stride + lane + 32 * i;
            g.k[u][i] = __bfloat162float(k_base[at]);
            g.v[u][i] = __bfloat162float(v_base[at]);
        }
}

// A warp's group of the block's walk: positions j0 + 2u + half (half = lane / 16), of which lane
// c = lane % 16 holds dimensions 8c .. 8c + 7, as bf16. Twice the positions of a kv_group in the
// same registers, and a quarter of the load instructions: at 64 rows a block walks 8 (row, head)
// pairs one after the other, each a chain of group round trips.
struct wide_group {
    uint4 k[k_wide_loads], v[k_wide_loads];
};

// Positions j0 .. j0 + k_wide_positions - 1 of the cache (those < end; nothing when j0 >= end).
__device__ __forceinline__ void load_wide(wide_group& g, const bf16* k_base, const bf16* v_base, long row_stride,
                                          int j0, int end) {
    if (j0 >= end) return;
    const int lane = threadIdx.x % 32, half = lane / 16, c = lane % 16;
#pragma unroll
    for (int u = 0; u < k_wide_loads; ++u) {
        const int j = j0 + 2 * u + half;
        const long at = (j < end ? j : j0) * row_stride + 8 * c;
        g.k[u] = *reinterpret_cast<const uint4*>(k_base + at);
        g.v[u] = *reinterpret_cast<const uint4*>(v_base + at);
    }
}

// Eight bf16 (a uint4) as floats.
__device__ __forceinline__ void unpack8(const uint4& w, float (&f)[8]) {
    const std::uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = __uint_as_float(u[i] << 16);
        f[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
    }
}

// A half-warp's online softmax over its positions of the block's walk (lane c: dimensions
// 8c .. 8c + 7 of the weighted sum). A group's positions update it at once: one rescale.
struct wide_softmax {
    float m = -INFINITY, l = 0.f, acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};

    // `q`: the lane's 8 dimensions of the query, in shared memory (registers are short).
    __device__ __forceinline__ void update(const wide_group& g, const float* q, float scale, int j0, int end) {
        const int half = (threadIdx.x % 32) / 16;
        const float4 qa = *reinterpret_cast<const float4*>(q), qb = *reinterpret_cast<const float4*>(q + 4);
        const float qv[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
        float d[k_wide_loads];
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            float k[8];
            unpack8(g.k[u], k);
            d[u] = 0.f;
#pragma unroll
            for (int e = 0; e < 8; ++e) d[u] += qv[e] * k[e];
        }
#pragma unroll
        for (int o = 8; o; o >>= 1)
#pragma unroll
            for (int u = 0; u < k_wide_loads; ++u) d[u] += __shfl_xor_sync(0xffffffffu, d[u], o);
        float m_new = m;
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            d[u] *= scale;
            if (j0 + 2 * u + half < end) m_new = fmaxf(m_new, d[u]);
        }
        if (m_new == -INFINITY) return;  // none of this half's positions is in the walk
        const float corr = expf(m - m_new);
        l *= corr;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[e] *= corr;
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            if (j0 + 2 * u + half >= end) continue;
            const float p = expf(d[u] - m_new);
            float v[8];
            unpack8(g.v[u], v);
            l += p;
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[e] += p * v[e];
        }
        m = m_new;
    }
};

// One warp's online softmax over cache positions 0 .. end - 1 (groups of k_attn_unroll
// whose loads are in flight together, the first, `first`, already loaded by the caller). Measured: loading the next group before the current
// one's arithmetic (two in flight) gained nothing and cost registers the kernel lacks.
struct softmax_state {
    float m = -INFINITY, l = 0.f, acc[4] = {0.f, 0.f, 0.f, 0.f};

    __device__ __forceinline__ void update(float score, const float (&vj)[4]) {
        const float m_new = fmaxf(m, score);
        const float corr = expf(m - m_new), p = expf(score - m_new);
        l = l * corr + p;
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] = acc[i] * corr + p * vj[i];
        m = m_new;
    }
};

__device__ __forceinline__ void attend_positions(softmax_state& st, const float (&q)[4], float scale, int end,
                                                 const bf16* k_base, const bf16* v_base, long row_stride,
                                                 const kv_group& first) {
    kv_group cur = first;
    for (int j0 = 0; j0 < end; j0 += k_attn_unroll) {
        if (j0 != 0) load_group(cur, k_base, v_base, row_stride, j0, end);
        float d[k_attn_unroll];
#pragma unroll
        for (int u = 0; u < k_attn_unroll; ++u) {
            d[u] = 0.f;
#pragma unroll
            for (int i = 0; i < 4; ++i) d[u] += q[i] * cur.k[u][i];
        }
#pragma unroll
        for (int o = 16; o; o >>= 1)
#pragma unroll
            for (int u = 0; u < k_attn_unroll; ++u) d[u] += __shfl_xor_sync(0xffffffffu, d[u], o);
#pragma unroll
        for (int u = 0; u < k_attn_unroll; ++u)
            if (j0 + u < end) st.update(d[u] * scale, cur.v[u]);
    }
}

// The current position's key and value, from registers (the cache may not hold them yet).
__device__ __forceinline__ void attend_current(softmax_state& st, const float (&q)[4], float scale,
                                               const float (&k_cur)[4], const float (&v_cur)[4]) {
    float d = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) d += q[i] * k_cur[i];
    st.update(warp_sum(d) * scale, v_cur);
}

// One block's share of a (row, head) when the cache walk is split over several blocks
// (flash decoding): its positions [lo, hi), and where the parts meet. With one part a block
// walks the whole cache and writes the output itself; with several each leaves its partial
// softmax (max, sum, weighted values) and the last part to finish (a ticket, as split-K
// takes) merges all of them in part order: the same bits whichever block comes last.
struct attention_parts {
    int lo, hi;               // cache positions this block walks
    int part, parts;          // which of how many; part 0 also takes the current position
    float* partials;          // [parts][2 + k_head_dim] of this (row, head)
    unsigned int* ticket;     // parts done of this (row, head); zero between uses
};

// Partial softmaxes (max, sum, weighted values) as merge_partials reads them: the warps'
// of one block from shared memory, or the parts' of one (row, head) from global memory
// (through L2: other blocks wrote them).
struct warp_partials {
    const attention_smem& sm;
    __device__ float m(int k) const { return sm.m[k]; }
    __device__ float l(int k) const { return sm.l[k]; }
    __device__ float value(int k, int d) const { return sm.acc[k][d]; }
};

struct part_partials {
    static constexpr int stride = 2 + k_head_dim;
    const float* p;
    __device__ float m(int k) const { return __ldcg(p + k * stride); }
    __device__ float l(int k) const { return __ldcg(p + k * stride + 1); }
    __device__ float value(int k, int d) const { return __ldcg(p + k * stride + 2 + d); }
};

struct merged_softmax {
    float top, total, sum[4];  // lane l: dimensions l, l+32, l+64, l+96 of the weighted sum
};

// One warp merges n partial softmaxes in order (skipping any that saw no position), so
// the result has the same bits whichever warp or block runs it.
template <class Partials>
__device__ __forceinline__ merged_softmax merge_partials(const Partials& parts, int n) {
    const int lane = threadIdx.x % 32;
    merged_softmax r{-INFINITY, 0.f, {0.f, 0.f, 0.f, 0.f}};
    for (int k = 0; k < n; ++k) r.top = fmaxf(r.top, parts.m(k));
    for (int k = 0; k < n; ++k) {
        const float l = parts.l(k);
        if (l == 0.f) continue;
        const float f = expf(parts.m(k) - r.top);
        r.total += l * f;
#pragma unroll
        for (int i = 0; i < 4; ++i) r.sum[i] += parts.value(k, lane + 32 * i) * f;
    }
    return r;
}

__device__ __forceinline__ void store_head(const merged_softmax& r, bf16* out) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) out[lane + 32 * i] = __float2bfloat16(r.sum[i] / r.total);
}

// One query head at position `pos`, by a whole block: the 8 warps take interleaved groups
// of k_wide_positions cache positions of [ap.lo, ap.hi), half-warps alternating, warp 0 of part 0
// starts its first half from the current position's key and value (registers: the cache may not
// hold them yet), each warp merges its halves, and warp 0 merges the warps' partial softmaxes in
// warp order: the same bits every run. `q_raw` is the query before its norm; `first` holds this
// warp's first group (load_wide at j0 = ap.lo + warp * k_wide_positions), loaded by the caller
// ahead of other work.
__device__ __forceinline__ void attend_block(attention_smem& sm, const float (&q_raw)[4], const head_norm& q_norm, float eps,
                                             int pos, const rope_table& rope, const bf16* k_base, const bf16* v_base,
                                             long row_stride, const wide_group& first, const float (&k_cur)[4],
                                             const float (&v_cur)[4], bf16* out, const attention_parts& ap) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, half = lane / 16, c = lane % 16;
    float q[4] = {q_raw[0], q_raw[1], q_raw[2], q_raw[3]};
    norm_rope(q, q_norm, eps, pos, rope);
    const float scale = rsqrtf(static_cast<float>(k_head_dim));
    // The current value (warp 0 of part 0), then the query, from the lane's dimensions
    // (lane + 32 i) to the walk's (8c .. 8c + 7), through this warp's row of the partials'
    // buffer; the query stays there for the walk.
    float* row = sm.acc[warp];
    auto to_row = [&](const float (&v)[4]) {
#pragma unroll
        for (int i = 0; i < 4; ++i) row[lane + 32 * i] = v[i];
        __syncwarp();
    };
    wide_softmax st;
    if (warp == 0 && ap.part == 0) {
        float d = 0.f;
#pragma unroll
        for (int i = 0; i < 4; ++i) d += q[i] * k_cur[i];
        d = warp_sum(d) * scale;
        to_row(v_cur);
        if (half == 0) {
            st.m = d;
            st.l = 1.f;
#pragma unroll
            for (int e = 0; e < 8; ++e) st.acc[e] = row[8 * c + e];
        }
        __syncwarp();
    }
    to_row(q);
    constexpr int step = k_attn_warps * k_wide_positions;
    wide_group cur = first;
    for (int j0 = ap.lo + warp * k_wide_positions; j0 < ap.hi; j0 += step) {
        if (j0 != ap.lo + warp * k_wide_positions) load_wide(cur, k_base, v_base, row_stride, j0, ap.hi);
        st.update(cur, row + 8 * c, scale, j0, ap.hi);
    }
    __syncwarp();
    // The warp's two halves, merged: half 0's lanes hold the result.
    const float m_o = __shfl_xor_sync(0xffffffffu, st.m, 16), l_o = __shfl_xor_sync(0xffffffffu, st.l, 16);
    const float m = fmaxf(st.m, m_o);
    const float f = st.l > 0.f ? expf(st.m - m) : 0.f, f_o = l_o > 0.f ? expf(m_o - m) : 0.f;
    float acc[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[e] = st.acc[e] * f + __shfl_xor_sync(0xffffffffu, st.acc[e], 16) * f_o;
    if (lane == 0) sm.m[warp] = m, sm.l[warp] = st.l * f + l_o * f_o;
    if (half == 0) {
        *reinterpret_cast<float4*>(row + 8 * c) = make_float4(acc[0], acc[1], acc[2], acc[3]);
        *reinterpret_cast<float4*>(row + 8 * c + 4) = make_float4(acc[4], acc[5], acc[6], acc[7]);
    }
    __syncthreads();
    if (warp == 0) {
        const merged_softmax r = merge_partials(warp_partials{sm}, k_attn_warps);
        if (ap.parts == 1) {
            store_head(r, out);
        } else {
            float* mine = ap.partials + ap.part * part_partials::stride;
            if (lane == 0) mine[0] = r.top, mine[1] = r.total;
#pragma unroll
            for (int i = 0; i < 4; ++i) mine[2 + lane + 32 * i] = r.sum[i];
            __syncwarp();
            unsigned int done = 0;
            if (lane == 0) done = take_ticket(ap.ticket);
            done = __shfl_sync(0xffffffffu, done, 0);
            __syncwarp();  // lane 0's acquire orders the other parts' partials for every lane
            if (done == static_cast<unsigned int>(ap.parts - 1)) {
                store_head(merge_partials(part_partials{ap.partials}, ap.parts), out);
                if (lane == 0) *ap.ticket = 0;
            }
        }
    }
    __syncthreads();
}

// The same head by one warp alone, for short caches (the code predictor's <= 15
// positions): no partial softmaxes to merge, no block barrier. `first` is the group at
// j0 = 0.
__device__ __forceinline__ void attend_warp(const float (&q_raw)[4], const head_norm& q_norm, float eps, int pos,
                                            const rope_table& rope, const bf16* k_base, const bf16* v_base,
                                            long row_stride, const kv_group& first, const float (&k_cur)[4],
                                            const float (&v_cur)[4], bf16* out) {
    const int lane = threadIdx.x % 32;
    float q[4] = {q_raw[0], q_raw[1], q_raw[2], q_raw[3]};
    norm_rope(q, q_norm, eps, pos, rope);
    const float scale = rsqrtf(static_cast<float>(k_head_dim));
    softmax_state st;
    attend_positions(st, q, scale, pos, k_base, v_base, row_stride, first);
    attend_current(st, q, scale, k_cur, v_cur);
#pragma unroll
    for (int i = 0; i < 4; ++i) out[lane + 32 * i] = __float2bfloat16(st.acc[i] / st.l);
}

}  // namespace megatts::mk

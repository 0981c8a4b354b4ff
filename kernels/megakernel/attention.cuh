// attention: the per-head steps of a decoder layer that are not matrix products:
// QK RMSNorm + RoPE, the KV-cache append, and causal decode attention over the
// session's cache. Lane l of a warp owns dimensions l, l+32, l+64, l+96 of a head's
// 128, so each RoPE pair (d, d+64) lives in one lane. Attention walks a (row, head)'s cache
// as 8 walkers in a fixed order, run by a team of 8, 4, 2 or 1 warps of one block: a launch
// with many (row, head) pairs takes narrow teams, so that every pair runs at once instead of
// one block walking several one after the other; over a long cache with blocks to spare the
// walk is split over several blocks (parts: each walks a range of positions, the last
// merges). A walk reads the cache 16 bytes a lane, two positions per warp load (wide_softmax),
// each warp's next k_walk_depth groups in flight through shared memory (walk_ring).
//
// Contract (device): when several rows of one session are in a launch (a prompt, the code
// predictor's first pass), store_kv() must finish for every row before a walk reads the
// cache (a phase barrier separates them). With one row per session warp 0 of a key head's
// first query head's part 0 appends its own row, and walks read only older positions. The
// parts of one (row, head) are in the same phase, and their tickets are zero when it begins.
// Angles are f32(pos) * inv_freq[i] with inv_freq rounded from double on the host, as the
// reference computes them.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "kernels/common/cp_async.cuh"
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

// A head's RMSNorm weights in the lane's dimensions (lane + 32 i), or none: the loads'
// registers, converted where norm_rope() uses them, so that the loads can be issued while a
// block waits at a grid barrier without the wait waiting for them.
struct head_norm {
    bf16 w[4];
    bool on;
};

__device__ __forceinline__ head_norm load_head_norm(const bf16* w) {
    const int lane = threadIdx.x % 32;
    head_norm n{{}, w != nullptr};
    if (w)
#pragma unroll
        for (int i = 0; i < 4; ++i) n.w[i] = w[lane + 32 * i];
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
        for (int i = 0; i < 4; ++i) v[i] = v[i] * inv * __bfloat162float(norm.w[i]);
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
// A walk's load: each load instruction of a warp reads two cache positions, one per half-warp,
// 16 bytes a lane; k_wide_loads of them are in flight together, a group of k_wide_positions.
inline constexpr int k_wide_loads = 4;
inline constexpr int k_wide_positions = 2 * k_wide_loads;
// The walk's fixed order, whichever warps run it: walker w takes the groups at w * 8, w * 8 + 64,
// ... of its positions, and the walkers' partial softmaxes merge in walker order. Teams of 8, 4, 2
// or 1 warps run the 8 walkers (warp t of a team: walkers t, t + width, ...), so a (row, head)'s
// result has the same bits in a launch of any batch size that splits its walk into as many parts.
inline constexpr int k_walkers = 8;
inline constexpr int k_walker_stride = k_walkers * k_wide_positions;
// A (row, head)'s walk is split over at most this many blocks, each taking at least this many
// positions (one group a walker): fewer, and the merge's round trips cost more than they save.
inline constexpr int k_max_attention_parts = 8;
inline constexpr int k_attention_part_positions = k_walker_stride;
// Nor is a cache of up to this many positions split at all: a block's warps then have all of the
// walk's groups (two at most) in flight at once, and a split adds its ticket's and its merge's
// round trips (talker step at B = 1 and 81 positions: 0.73 ms in two parts, 0.70 in one).
inline constexpr int k_attention_split_positions = 2 * k_walker_stride;

// A partial softmax (max, sum, weighted values) of one head; the values first, where 16-byte
// stores can reach them.
struct alignas(16) softmax_partial {
    float acc[k_head_dim];
    float m, l;
};

// Groups a warp's walk has in flight, staged through shared memory (in registers, two groups
// took the kernel's spills from 412 to 1,148 bytes): a walk is a chain of dependent group
// loads otherwise, about 2 us each at 64 rows.
inline constexpr int k_walk_depth = 4;

// A warp's staged groups: lane l's 16-byte pieces of group slot s at [s][u][l], written by
// lane l's own copies and read back by lane l alone (no warp barrier between them).
struct walk_ring {
    uint4 k[k_walk_depth][k_wide_loads][32], v[k_walk_depth][k_wide_loads][32];
};

struct attention_smem {
    walk_ring ring[k_attn_warps];
    float q[k_attn_warps][k_head_dim];        // each warp's query, normalised and rotated
    float current[k_attn_warps][k_head_dim];  // the current position's value (walker 0's warp)
    softmax_partial walker[k_attn_warps * k_walkers];  // [team * k_walkers + walker]
};

// One head's 128 values of a row (lane l: dimensions l, l+32, l+64, l+96).
__device__ __forceinline__ void load_head(const float* src, float (&v)[4]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = src[lane + 32 * i];
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

// A half-warp's online softmax over its positions of a walker's groups (lane c: dimensions
// 8c .. 8c + 7 of the weighted sum). A group's positions update it at once: one rescale.
struct wide_softmax {
    float m = -INFINITY, l = 0.f, acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};

    // Updated by a group of a walk in ring slot `slot`: positions j0 + 2u + half (half = lane / 16),
    // of which lane c = lane % 16 holds dimensions 8c .. 8c + 7, as bf16 (a quarter of the load
    // instructions of 2-byte loads). The group is read from shared memory where it is used, not
    // copied into 32 registers first (a frame at 64 and 96 rows -1%, bench/RESULTS.md 2026-12-02).
    // `q`: the lane's 8 dimensions of the query, in shared memory (registers are short). Rounded
    // operation by operation, here and in the merges, so that no choice of the compiler's
    // (contracting a product and a sum or not) differs between the kernel's instantiations: a
    // (row, head) has the same bits in a launch of any size (tests/gpu/test_megakernel.cpp).
    __device__ __forceinline__ void update(const walk_ring& ring, int slot, const float* q, float scale, int j0,
                                           int end) {
        const int lane = threadIdx.x % 32, half = lane / 16;
        const float4 qa = *reinterpret_cast<const float4*>(q), qb = *reinterpret_cast<const float4*>(q + 4);
        const float qv[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
        float d[k_wide_loads];
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            float k[8];
            unpack8(ring.k[slot][u][lane], k);
            d[u] = 0.f;
#pragma unroll
            for (int e = 0; e < 8; ++e) d[u] = __fmaf_rn(qv[e], k[e], d[u]);
        }
#pragma unroll
        for (int o = 8; o; o >>= 1)
#pragma unroll
            for (int u = 0; u < k_wide_loads; ++u) d[u] = __fadd_rn(d[u], __shfl_xor_sync(0xffffffffu, d[u], o));
        float m_new = m;
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            d[u] = __fmul_rn(d[u], scale);
            if (j0 + 2 * u + half < end) m_new = fmaxf(m_new, d[u]);
        }
        if (m_new == -INFINITY) return;  // none of this half's positions is in the walk
        const float corr = expf(m - m_new);
        l = __fmul_rn(l, corr);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[e] = __fmul_rn(acc[e], corr);
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            if (j0 + 2 * u + half >= end) continue;
            const float p = expf(d[u] - m_new);
            float v[8];
            unpack8(ring.v[slot][u][lane], v);
            l = __fadd_rn(l, p);
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[e] = __fmaf_rn(p, v[e], acc[e]);
        }
        m = m_new;
    }

    // The warp's two halves merged into `out` (lane 0 the max and sum, half 0 the values).
    __device__ __forceinline__ void store(softmax_partial& out) const {
        const int lane = threadIdx.x % 32, half = lane / 16, c = lane % 16;
        const float m_o = __shfl_xor_sync(0xffffffffu, m, 16), l_o = __shfl_xor_sync(0xffffffffu, l, 16);
        const float top = fmaxf(m, m_o);
        const float f = l > 0.f ? expf(m - top) : 0.f, f_o = l_o > 0.f ? expf(m_o - top) : 0.f;
        float sum[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) sum[e] = __fmaf_rn(acc[e], f, __fmul_rn(__shfl_xor_sync(0xffffffffu, acc[e], 16), f_o));
        if (lane == 0) out.m = top, out.l = __fmaf_rn(l, f, __fmul_rn(l_o, f_o));
        if (half == 0) {
            *reinterpret_cast<float4*>(out.acc + 8 * c) = make_float4(sum[0], sum[1], sum[2], sum[3]);
            *reinterpret_cast<float4*>(out.acc + 8 * c + 4) = make_float4(sum[4], sum[5], sum[6], sum[7]);
        }
    }
};

// Partial softmaxes as merge_partials reads them: a team's walkers' from shared memory, or the
// parts' of one (row, head) from global memory (through L2: other blocks wrote them).
struct walker_partials {
    const softmax_partial* p;  // &walker[team * k_walkers]
    __device__ float m(int k) const { return p[k].m; }
    __device__ float l(int k) const { return p[k].l; }
    __device__ float value(int k, int d) const { return p[k].acc[d]; }
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
// the result has the same bits whichever warp or block runs it: each folded into the running
// max, sum and values as it comes (one pass, each partial read once).
template <class Partials>
__device__ __forceinline__ merged_softmax merge_partials(const Partials& parts, int n) {
    const int lane = threadIdx.x % 32;
    merged_softmax r{-INFINITY, 0.f, {0.f, 0.f, 0.f, 0.f}};
    for (int k = 0; k < n; ++k) {
        const float l = parts.l(k);
        if (l == 0.f) continue;
        const float m = parts.m(k), top = fmaxf(r.top, m);
        const float a = expf(r.top - top), b = expf(m - top);  // a = 0 for the first
        r.total = __fmaf_rn(r.total, a, __fmul_rn(l, b));
#pragma unroll
        for (int i = 0; i < 4; ++i) r.sum[i] = __fmaf_rn(r.sum[i], a, __fmul_rn(parts.value(k, lane + 32 * i), b));
        r.top = top;
    }
    return r;
}

__device__ __forceinline__ void store_head(const merged_softmax& r, bf16* out) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) out[lane + 32 * i] = __float2bfloat16(r.sum[i] / r.total);
}

// A (row, head)'s share of a launch's attention (flash decoding over parts): its cache, the
// positions [lo, hi) it walks, and where the parts meet. With one part a team walks the whole
// cache and writes the output itself; with several each leaves its partial softmax and the last
// part to finish (a ticket: take_ticket()) merges all of them in part order: the same bits
// whichever block comes last.
struct attention_task {
    const bf16* k_base;
    const bf16* v_base;
    long row_stride;
    int lo, hi;            // cache positions this part walks
    int part, parts;       // which of how many; part 0 also takes the current position
    float* partials;       // [parts][2 + k_head_dim] of this (row, head)
    unsigned int* ticket;  // parts done of this (row, head); zero between uses
    bf16* out;
};

// The walk's groups in the order a warp of a team takes them: walker t's, then walker t +
// width's, ...; w >= k_walkers: none left (a walker without positions has no later ones either).
struct walk_cursor {
    int w, j0;

    __device__ walk_cursor(int t, const attention_task& a) : w(t), j0(a.lo + t * k_wide_positions) {
        if (j0 >= a.hi) w = k_walkers;
    }
    __device__ void advance(int width, const attention_task& a) {
        j0 += k_walker_stride;
        if (j0 < a.hi) return;
        w += width;
        j0 = a.lo + w * k_wide_positions;
        if (j0 >= a.hi) w = k_walkers;
    }
};

// Copies the cursor's group (if any) into ring slot `slot` and moves the cursor on; one commit
// group either way, so that a wait counts groups. Positions past hi are zero-filled. The copies go
// through the L1: the warps of a key head's two query heads sit side by side in a block and walk
// the same lines at about the same time, so the second's copies are L1 hits (talker attention at
// 96 and 128 rows -2.5%, bench/RESULTS.md 2026-12-02). Safe because no cache line a walk reads is
// written in the launch after any block read it: a walk reads positions older than its row's,
// written in earlier launches (the L1 is invalidated between them) or, in the code predictor, in
// earlier passes of this one, before any walk could read them.
__device__ __forceinline__ void stage_next(walk_ring& ring, int slot, walk_cursor& cursor, int width,
                                           const attention_task& a) {
    if (cursor.w < k_walkers) {
        const int lane = threadIdx.x % 32, half = lane / 16, c = lane % 16;
#pragma unroll
        for (int u = 0; u < k_wide_loads; ++u) {
            const int j = cursor.j0 + 2 * u + half;
            const bool valid = j < a.hi;
            const long at = (valid ? j : cursor.j0) * a.row_stride + 8 * c;
            cp_async::copy16_l1(&ring.k[slot][u][lane], a.k_base + at, valid);
            cp_async::copy16_l1(&ring.v[slot][u][lane], a.v_base + at, valid);
        }
        cursor.advance(width, a);
    }
    cp_async::commit();
}

// The first k_walk_depth groups of this warp's walk, requested ahead of the rest of the
// preamble; walk() takes the cursor on from there.
__device__ __forceinline__ walk_cursor start_walk(walk_ring& ring, int t, int width, const attention_task& a) {
    walk_cursor cursor(t, a);
    for (int d = 0; d < k_walk_depth; ++d) stage_next(ring, d, cursor, width, a);
    return cursor;
}

// This warp's walkers of a task for its team (`width` warps, this one the team's `t`-th): each
// walker's groups one after the other, from the ring (start_walk() staged the first ones), its
// partial into shared memory. Walker 0 of part 0 starts its first half from the current position
// (the cache may not hold it yet): score `d_cur`, value in sm.current[warp]. sm.q[warp] holds
// the query.
__device__ __forceinline__ void walk(attention_smem& sm, int team, int t, int width, const attention_task& a,
                                     float scale, walk_cursor& cursor, float d_cur) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, half = lane / 16, c = lane % 16;
    walk_ring& ring = sm.ring[warp];
    softmax_partial* slots = sm.walker + team * k_walkers;
    int slot = 0;
    for (int w = t; w < k_walkers; w += width) {
        const int j_first = a.lo + w * k_wide_positions;
        const bool seeded = w == 0 && a.part == 0;
        if (j_first >= a.hi && !seeded) {  // nothing to walk: a partial that merge_partials skips
            if (lane == 0) slots[w].m = -INFINITY, slots[w].l = 0.f;
            continue;
        }
        wide_softmax st;
        if (seeded && half == 0) {
            st.m = d_cur;
            st.l = 1.f;
#pragma unroll
            for (int e = 0; e < 8; ++e) st.acc[e] = sm.current[warp][8 * c + e];
        }
        for (int j0 = j_first; j0 < a.hi; j0 += k_walker_stride) {
            cp_async::wait_groups<k_walk_depth - 1>();  // this lane's copies of the group landed
            st.update(ring, slot, sm.q[warp] + 8 * c, scale, j0, a.hi);
            // The slot is free once the update has used its values: the group k_walk_depth on.
            stage_next(ring, slot, cursor, width, a);
            slot = slot + 1 == k_walk_depth ? 0 : slot + 1;
        }
        st.store(slots[w]);
    }
    cp_async::wait_all();  // nothing of this walk still in flight when the ring is reused
}

// After the walk and a block barrier, the team's warp 0: the walkers merged in walker order,
// into the output, or, with several parts, into this part's partial; the last part to take its
// ticket then merges the parts' partials in part order.
__device__ __forceinline__ void finish_walk(const attention_smem& sm, int team, const attention_task& a) {
    const int lane = threadIdx.x % 32;
    const merged_softmax r = merge_partials(walker_partials{sm.walker + team * k_walkers}, k_walkers);
    if (a.parts == 1) {
        store_head(r, a.out);
        return;
    }
    float* mine = a.partials + a.part * part_partials::stride;
    if (lane == 0) mine[0] = r.top, mine[1] = r.total;
#pragma unroll
    for (int i = 0; i < 4; ++i) mine[2 + lane + 32 * i] = r.sum[i];
    __syncwarp();
    unsigned int done = 0;
    if (lane == 0) done = take_ticket(a.ticket);
    done = __shfl_sync(0xffffffffu, done, 0);
    __syncwarp();  // lane 0's acquire orders the other parts' partials for every lane
    if (done == static_cast<unsigned int>(a.parts - 1)) {
        store_head(merge_partials(part_partials{a.partials}, a.parts), a.out);
        if (lane == 0) *a.ticket = 0;
    }
}

}  // namespace megatts::mk

// frame_stack: the vocoder's frame-rate transformer for a call of a few items in one
// persistent launch: the input projection, every layer's qkv product, attention,
// o-projection, gate/up and down products, and the output projection, as the steps of
// frame_stack_params, separated by grid barriers instead of kernel boundaries.
//
// Contract (device): one block of k_stack_threads per multiprocessor, all co-resident
// (the host checks occupancy), dynamic shared memory = stack_smem_floats() floats. A
// product step computes what conv_gemm computes from the same gemm_params (the same
// epilogue, gemm_epilogue.cuh, per row and column pair) with plain f32 FMAs: each
// block owns a tile of `columns` output columns over all of K, so no split-K partials
// or tickets; an attention step is sliding_attention's attend_head() per (item, head).
// Sums run in a fixed order (per thread k ascending, then lanes by a butterfly, then
// warps in order), so a launch is bit-for-bit repeatable. The barrier's counters are
// 0 at entry and left at 0 (the last block to finish resets them).
//
// Why: at one session each of the 40 products was its own launch of 7-10 us, mostly
// fixed costs (launch, dependency wait, split-K fence, ticket and sum) around 0.5-2 us
// of weight streaming. Here a product is a barrier (about 1 us) plus its streaming,
// and each block requests its next tile's weights between arriving and waiting, and the
// epilogue's inputs of its first pass that do not depend on the step before: the rows'
// places, the columns' parameters and (where steps[].residual_ahead) the residuals, which
// after the wait were one more L2 round trip in every step's chain.
#pragma once

#include "kernels/common/cp_async.cuh"
#include "kernels/common/grid_barrier.cuh"
#include "kernels/vocoder/frame_stack_params.h"
#include "kernels/vocoder/gemm_epilogue.cuh"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/sliding_attention.cuh"

namespace megatts::voc {
namespace stack {

using weight_regs = float4[k_stack_max_loads];

// A tile of `columns` output columns: thread t holds columns 4 * (t % groups) .. + 3 of
// the tile for the K rows t / groups + j * k_lanes. A warp's lanes of one column group
// differ in the lane bits above log2(groups), which the butterfly sums over.
struct tile_layout {
    int columns, groups, k_lanes, group, k_lane;
    __device__ explicit tile_layout(int c)
        : columns(c), groups(c / 4), k_lanes(k_stack_threads / (c / 4)), group(static_cast<int>(threadIdx.x) % (c / 4)),
          k_lane(static_cast<int>(threadIdx.x) / (c / 4)) {}
};

__device__ __forceinline__ void load_weights(const gemm_params& g, const tile_layout& l, int tile, weight_regs& w) {
    const float* base = g.b.w + static_cast<long>(tile) * l.columns + 4 * l.group;
#pragma unroll
    for (int j = 0; j < k_stack_max_loads; ++j) {
        const int k = l.k_lane + j * l.k_lanes;
        if (k < g.b.K) w[j] = __ldg(reinterpret_cast<const float4*>(base + static_cast<long>(k) * g.b.n_pad));
    }
}

// The call's A rows (one per item) into a[rows][K]; rows past the items are zeros.
__device__ __forceinline__ void stage_rows(const gemm_params& g, int items, int rows, float* a) {
    const int vecs = g.b.K / 4;
    for (int e = threadIdx.x; e < rows * vecs; e += k_stack_threads) {
        const int r = e / vecs, k = (e - r * vecs) * 4;
        float* dst = a + r * g.b.K + k;
        if (r < items)
            cp_async::copy16(dst, view_row(g.a.view, g.batch->items[r], r, 1, 0) + k);
        else
            *reinterpret_cast<float4*>(dst) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    cp_async::wait_all();
    __syncthreads();
}

// 1 / rms of each staged row, a warp per row, in conv_gemm's order (row_norms).
__device__ __forceinline__ void row_scales(const gemm_params& g, int items, const float* a, float* scale) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < items; r += k_stack_warps) {
        const float* x = a + r * g.b.K;
        float ss = 0.f;
#pragma unroll 4
        for (int k = lane; k < g.b.K; k += 32) ss += x[k] * x[k];
        for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
        if (lane == 0) scale[r] = 1.0f / sqrtf(ss / static_cast<float>(g.b.K) + g.epi.eps);
    }
}

// One epilogue thread's inputs for its pair of the block's first tile and first pass of
// rows (thread e: row e / pairs, columns 2 * (e % pairs)), read ahead of the step.
struct epilogue_ahead {
    bool valid = false, residual = false;
    epi_row row;
    epi_columns cols;
    float2 res;
};

__device__ __forceinline__ void read_epilogue_ahead(const gemm_params& g, int columns, int items, bool residual,
                                                    epilogue_ahead& e) {
    const int pairs = columns / 2, rr = static_cast<int>(threadIdx.x) / pairs;
    e.valid = false;
    if (rr >= k_stack_rows || rr >= items) return;
    const int n = static_cast<int>(blockIdx.x) * columns + (static_cast<int>(threadIdx.x) - rr * pairs) * 2;
    e.row = resolve_row(g, rr);
    e.cols = load_columns(g, n);
    e.residual = residual && g.epi.res.data;
    if (e.residual) e.res = load_residual(g, e.row, e.cols);
    e.valid = true;
}

// This block's tiles of one product. `w` holds the first tile's weights when `preloaded`,
// `ahead` this thread's epilogue inputs of the first tile's first pass where valid.
__device__ __forceinline__ void product(const gemm_params& g, int columns, int items, float* smem, weight_regs& w,
                                        bool preloaded, const epilogue_ahead& ahead) {
    const int tiles = g.b.N / columns;
    if (static_cast<int>(blockIdx.x) >= tiles) return;
    const tile_layout l(columns);
    float* red = smem;                                                       // [warps][rows][max columns]
    float* scale = red + k_stack_warps * k_stack_rows * k_stack_max_columns;  // [max items]
    float* a = scale + k_stack_max_items;                                     // [rows][K]
    const int K = g.b.K;
    stage_rows(g, items, (items + k_stack_rows - 1) / k_stack_rows * k_stack_rows, a);
    if (g.epi.row_norm) row_scales(g, items, a, scale);  // published by the pass's barrier
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        if (t != static_cast<int>(blockIdx.x) || !preloaded) load_weights(g, l, t, w);
        for (int r0 = 0; r0 < items; r0 += k_stack_rows) {
            float acc[k_stack_rows][4] = {};
#pragma unroll
            for (int j = 0; j < k_stack_max_loads; ++j) {
                const int k = l.k_lane + j * l.k_lanes;
                if (k >= K) break;
#pragma unroll
                for (int rr = 0; rr < k_stack_rows; ++rr) {
                    const float x = a[(r0 + rr) * K + k];
                    acc[rr][0] = fmaf(x, w[j].x, acc[rr][0]);
                    acc[rr][1] = fmaf(x, w[j].y, acc[rr][1]);
                    acc[rr][2] = fmaf(x, w[j].z, acc[rr][2]);
                    acc[rr][3] = fmaf(x, w[j].w, acc[rr][3]);
                }
            }
            for (int o = 16; o >= l.groups; o >>= 1)
#pragma unroll
                for (int rr = 0; rr < k_stack_rows; ++rr)
#pragma unroll
                    for (int c = 0; c < 4; ++c) acc[rr][c] += __shfl_xor_sync(0xffffffffu, acc[rr][c], o);
            if (lane < l.groups)
#pragma unroll
                for (int rr = 0; rr < k_stack_rows; ++rr)
#pragma unroll
                    for (int c = 0; c < 4; ++c)
                        red[(warp * k_stack_rows + rr) * k_stack_max_columns + 4 * l.group + c] = acc[rr][c];
            __syncthreads();
            const int pairs = columns / 2;
            for (int e = threadIdx.x; e < k_stack_rows * pairs; e += k_stack_threads) {
                const int rr = e / pairs, c = (e - rr * pairs) * 2, r = r0 + rr;
                if (r >= items) continue;
                float v0 = 0.f, v1 = 0.f;
                for (int q = 0; q < k_stack_warps; ++q) {
                    v0 += red[(q * k_stack_rows + rr) * k_stack_max_columns + c];
                    v1 += red[(q * k_stack_rows + rr) * k_stack_max_columns + c + 1];
                }
                const int n = t * columns + c;
                // (k_stack_rows x pairs <= 64 threads: a thread's only pair of the pass, the
                // one read ahead for the first tile's first pass.)
                const bool read = ahead.valid && t == static_cast<int>(blockIdx.x) && r0 == 0;
                const epi_row row = read ? ahead.row : resolve_row(g, r);
                const epi_columns kc = read ? ahead.cols : load_columns(g, n);
                const float2 res = read && ahead.residual ? ahead.res : load_residual(g, row, kc);
                finish_pair(g, row, n, kc, res, v0, v1, g.epi.row_norm ? scale[r] : 1.f);
            }
            __syncthreads();  // the next pass rewrites red
        }
    }
}

__device__ __forceinline__ void attention(const attention_params& p, int items, float* smem, float* scratch) {
    for (int u = blockIdx.x; u < items * p.heads; u += gridDim.x) {
        attend_head(p, u / p.heads, u % p.heads, smem, scratch);
        __syncthreads();  // the next (item, head) restages smem
    }
}

// Requests this block's first tile of step s when it is a product; true if it did. With
// `items` > 0 (the call's description is readable: past the predecessor's wait), also
// this thread's epilogue inputs for that tile.
__device__ __forceinline__ bool preload(const frame_stack_params& p, int s, int items, weight_regs& w,
                                        epilogue_ahead& ahead) {
    const stack_step& st = p.steps[s];
    ahead.valid = false;
    if (st.kind != stack_step_kind::product) return false;
    const gemm_params& g = p.products[st.index];
    if (static_cast<int>(blockIdx.x) >= g.b.N / st.columns) return false;
    load_weights(g, tile_layout(st.columns), blockIdx.x, w);
    if (items > 0) read_epilogue_ahead(g, st.columns, items, st.residual_ahead != 0, ahead);
    return true;
}

}  // namespace stack

__global__ void __launch_bounds__(k_stack_threads, 1) frame_stack_kernel(const __grid_constant__ frame_stack_params p) {
    extern __shared__ __align__(16) float smem[];
    __shared__ float scratch[32];
    stack::weight_regs w;
    stack::epilogue_ahead ahead;
    // Weights never change: no need to wait for them (the call's description must wait).
    bool preloaded = stack::preload(p, 0, 0, w, ahead);
    wait_for_predecessor();
    const int items = p.batch->n_items;
    for (int s = 0; s < p.n_steps; ++s) {
        const stack_step& st = p.steps[s];
        if (s + 1 == p.n_steps) allow_successor();
        if (st.kind == stack_step_kind::product)
            stack::product(p.products[st.index], st.columns, items, smem, w, preloaded, ahead);
        else
            stack::attention(p.attentions[st.index], items, smem, scratch);
        if (s + 1 < p.n_steps) {
            arrive(p.barrier);
            preloaded = stack::preload(p, s + 1, items, w, ahead);
            wait(p.barrier, static_cast<unsigned int>(s + 1));
        }
    }
    // Every block is past its last wait once it counts itself done; the last one to do so
    // leaves both counters at 0 for the next launch.
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(p.barrier + 1, 1u) == gridDim.x - 1) {
        atomicExch(p.barrier, 0u);
        atomicExch(p.barrier + 1, 0u);
    }
}

}  // namespace megatts::voc

// conv_gemm: the vocoder's matrix kernel (conv_implicit.cuh is its form for the convs
// with many taps, and shares its products and its end). A block computes a BM x BN tile of
// Y = A x W for the batch rows of a layer (every session's rows of this frame stacked
// in M, so the weights are read once per tile whatever the batch), over one split of
// K, with f32-accurate bf16 tensor-core products (bf16x3.cuh); gemm_params.h says
// what A, W and the epilogue are.
//
// Contract (device; launched by vocoder_kernels.cu with grid (ceil(N / BN),
// ceil(M_max / BM), splits) and gemm_tile::smem_bytes of dynamic shared memory):
// - A rows come straight from their tensor (gemm_source.cuh); K and N need not be
//   multiples of anything: A is zero past K, W is zero-padded past K and N. Where the
//   source allows 16-byte copies, each block first tabulates where every (tap, row)
//   reads from (before the dependency wait: it needs only the batch description), so
//   that a k-step's copy is a lookup, not a ring wrap and a causal check per row.
// - W arrives already split for bf16x3 (gemm_matrix::w_split), so a k-step's weights
//   are one 16-byte shared-memory read per lane and n8 tile, not four reads and two
//   splits (at B = 64 the k-loop issued as many split and shared-memory instructions
//   as MMAs); A is split where it is read, since it changes every call. On sm_90a the
//   tiles of 16-row warps (gemm_wgmma) instead take W as core matrices (w_cores) and
//   multiply with warpgroup wgmma steps, B read from shared memory by the tensor cores.
// - Pipeline: `stages` k-steps of W and A are in flight through cp.async; the first
//   stages of W are requested before the dependency wait (programmatic_launch.cuh),
//   since weights never change.
// - Split-K: where the launch is in clusters of a tile's splits (gemm_params::cluster_sum),
//   each split keeps its partial tile in its shared memory, and after a cluster barrier
//   split s adds every split's part of its share of the tile's rows, in split order, over
//   distributed shared memory and runs the epilogue on them. Otherwise each split writes
//   its partial tile to the workspace; the last split to arrive (an arrival counter per
//   tile) adds the partials in split order, runs the epilogue and resets the counter to 0
//   for the next launch. Deterministic, and the same bits either way. Which of the two
//   paths an instantiation holds: its split_sums (conv_gemm_kernel has one of each).
// - Blocks whose rows are all past this call's batch do nothing.
#pragma once

#include <climits>

#include <cooperative_groups.h>

#include "kernels/common/cp_async.cuh"
#include "kernels/common/grid_barrier.cuh"
#include "kernels/vocoder/bf16x3.cuh"
#include "kernels/vocoder/gemm_epilogue.cuh"
#include "kernels/vocoder/gemm_params.h"
#include "kernels/vocoder/gemm_shape.h"
#include "kernels/vocoder/gemm_source.cuh"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/view_addressing.cuh"
#include "kernels/vocoder/wgmma.cuh"

namespace megatts::voc {

template <int BM, int BN, int WM, int WN, int Stages, int MinBlocks>
struct gemm_tile {
    static constexpr int bm = BM, bn = BN, wm = WM, wn = WN, stages = Stages, min_blocks = MinBlocks;
    static constexpr int bk = k_gemm_k_step;
    static constexpr int threads = WM * WN * 32;
    static constexpr int warp_rows = BM / WM, warp_cols = BN / WN;
    static constexpr int mt = warp_rows / 16, nt = warp_cols / 8;
    // A rows padded so that the fragment reads of a warp hit 32 distinct banks: rows 4
    // banks apart (lane 4g + t reads row g, column t). W as w_split lays it out, [2
    // chunks of 16 k][BN columns][4 slots] 16-byte words: lane (g, t) reads word 4g + t
    // of its n8 tile, so a warp reads 512 contiguous bytes.
    static constexpr int a_stride = bk + 4;
    static constexpr int w_words = 2 * BN * 4;  // uint4s a stage
    static constexpr int a_floats = BM * a_stride;
    static constexpr int w_floats = w_words * 4;
    // The finished tile, staged for the epilogue in the pipeline's buffers: rows 4
    // floats apart in banks, so a warp's pair stores (rows g, columns 2t) do not collide.
    static constexpr int out_stride = BN + 4;
    // Then the tile rows' output addresses (gemm_epilogue.cuh) and the tile's residuals,
    // 8-byte aligned. A thread's pairs all share its columns: the epilogue's threads are
    // whole rows of pair columns, epi_row_step rows at a time (with BN = 96, 240 of 256
    // threads, 5 rows at a time).
    static constexpr int epi_rows_offset = BM * out_stride;
    static constexpr int epi_row_floats = static_cast<int>(sizeof(epi_row) / sizeof(float));
    static constexpr int res_offset = epi_rows_offset + BM * epi_row_floats;
    static constexpr int pair_cols = BN / 2;
    static constexpr int epi_row_step = (WM * WN * 32) / pair_cols, epi_threads = epi_row_step * pair_cols;
    static constexpr int pairs_per_thread = (BM + epi_row_step - 1) / epi_row_step;
    static constexpr int epilogue_floats = res_offset + BM * BN;
    static_assert(epi_rows_offset % 2 == 0 && sizeof(epi_row) % sizeof(float) == 0 && res_offset % 2 == 0);
    static_assert(epi_row_step >= 1);
    static constexpr int pipeline_floats = Stages * (a_floats + w_floats);
    static constexpr int smem_bytes = (pipeline_floats > epilogue_floats ? pipeline_floats : epilogue_floats) * 4;
    static constexpr int a_rows_per_pass = threads / 8;  // 8 threads cover one row's 32 columns
    static_assert(warp_rows % 16 == 0 && warp_cols % 8 == 0 && mt >= 1 && nt >= 1);
    static_assert(BM % a_rows_per_pass == 0 && w_words % threads == 0 && Stages >= 2 && a_floats % 4 == 0);
    // Tiles read W's columns n0..n0 + BN - 1, within its padded width where BN divides
    // k_gemm_n_align, or where the program uses the shape only for N a multiple of BN
    // (gemm_shape.h).
    static_assert(BN % 8 == 0 && (k_gemm_n_align % BN == 0 || BN == 96));
};

// Whether a tile's products run as Hopper warpgroup steps (wgmma.cuh, sm_90a): tiles whose
// warps are 16 rows across the whole width, so that each 4 warps cover 64 rows, with W's
// k-steps as core matrices (gemm_matrix::w_cores); the other tiles, and every tile on
// other GPUs, run mma.sync on w_split.
template <class T>
inline constexpr bool gemm_wgmma =
    MEGATTS_VOC_WGMMA && T::wn == 1 && T::warp_rows == 16 && (T::bn == 32 || T::bn == 64 || T::bn == 96);

// The products of one 16-k half of a k-step: this warp's A fragments (hi and lo, per m16
// tile) against W's split fragments of its n8 tiles in the stage `Ws`, half `kk / 16`.
// Lane (g, t) reads word 4g + t of each n8 tile: {hi k, hi k + 8, lo k, lo k + 8}, so each
// product's pair of B registers is adjacent as loaded (as {hi, lo, hi, lo} the compiler
// moved them into pairs: about 60 moves a warp and k-step beside the step's 48 MMAs).
template <class T>
__device__ __forceinline__ void multiply_half(const uint4* Ws, int kk, int col0, const std::uint32_t (&a_hi)[T::mt][4],
                                              const std::uint32_t (&a_lo)[T::mt][4], float (&acc)[T::mt][T::nt][4]) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < T::nt; ++j) {
        const uint4 w = Ws[((kk / 16) * T::bn + col0 + j * 8 + g) * 4 + t];
        const bf16x2_split b0{w.x, w.z}, b1{w.y, w.w};
#pragma unroll
        for (int i = 0; i < T::mt; ++i) mma_bf16x3(acc[i][j], a_hi[i], a_lo[i], b0, b1);
    }
}

// The three bf16x3 products of 16-k half `h` of a k-step as warpgroup products (gemm_wgmma
// tiles), in mma_bf16x3's order: this warp's A fragments of the half (hi and lo) against the
// stage's core matrices ([BN / 8][plane][4], w_cores). Issues only: the caller fences before
// and commits after (wgmma.cuh).
template <class T>
__device__ __forceinline__ void wgmma_bf16x3_half(const uint4* Ws, int h, const std::uint32_t (&a_hi)[4],
                                                  const std::uint32_t (&a_lo)[4], float (&acc)[1][T::nt][4]) {
    constexpr int plane_bytes = 4 * wgmma::k_core_bytes, group_bytes = 2 * plane_bytes;
    const char* w = reinterpret_cast<const char*>(Ws);
    float(&d)[T::bn / 2] = *reinterpret_cast<float(*)[T::bn / 2]>(&acc[0][0][0]);
    const std::uint64_t w_hi = wgmma::descriptor(w + h * 2 * wgmma::k_core_bytes, group_bytes);
    const std::uint64_t w_lo = wgmma::descriptor(w + plane_bytes + h * 2 * wgmma::k_core_bytes, group_bytes);
    wgmma::mma<T::bn>(d, a_hi, w_lo);
    wgmma::mma<T::bn>(d, a_lo, w_hi);
    wgmma::mma<T::bn>(d, a_hi, w_hi);
}

// What a block of the grid (ceil(N / BN), ceil(M_max / BM), splits) computes: its tile's
// first row and column, its split's k-steps, and the call's rows. The batch description
// is written before the first kernel of the call (an ordinary dependency), so it may be
// read before the dependency wait.
struct tile_range {
    int m0, n0, split, M, first_step, steps;
};

template <class T>
__device__ tile_range tile_range_of(const gemm_params& p) {
    tile_range r;
    r.m0 = blockIdx.y * T::bm;
    r.n0 = blockIdx.x * T::bn;
    r.split = blockIdx.z;
    r.M = p.batch->n_items * p.rows_per_frame;
    r.first_step = r.split * p.steps_per_split;
    r.steps = min(p.k_steps, r.first_step + p.steps_per_split) - r.first_step;
    return r;
}

template <class T>
struct gemm_block {
    const gemm_params& p;
    float* a_smem;
    uint4* w_smem;
    gemm_row* rows;
    int* tap_rows;  // vec sources: [tap][bm] offsets of the rows' sources in float4s, -1: zeros
    int m0, n0;

    // Each chunk's BN columns are contiguous in w_split: two runs of BN * 4 words; a
    // step's BN / 8 column groups in w_cores: one run. The copy loops have trip counts
    // fixed at compile time: written as strided loops from threadIdx.x, they compiled to
    // remainder branches and 64-bit address arithmetic per copy, more instructions than
    // the step's MMAs. `src`: this tile's columns of the step (weight_step()).
    __device__ void load_weights(int stage, const uint4* src) const {
        uint4* dst = w_smem + stage * T::w_words;
        const int chunk_words = p.b.n_pad * 4;
#pragma unroll
        for (int j = 0; j < T::w_words / T::threads; ++j) {
            const int i = static_cast<int>(threadIdx.x) + j * T::threads;
            if constexpr (gemm_wgmma<T>)
                cp_async::copy16(dst + i, src + i, true);
            else
                cp_async::copy16(dst + i, src + (i / (T::bn * 4)) * chunk_words + i % (T::bn * 4), true);
        }
    }

    // Both layouts take 8 x n_pad words a k-step. `cores`: the core matrices wgmma tiles read
    // (w_cores, or conv_implicit's w_tf32, laid out alike).
    __device__ const uint4* weight_step(int step, const uint4* cores) const {
        if constexpr (gemm_wgmma<T>) return cores + (static_cast<long>(step) * p.b.n_pad + n0) * 8;
        return p.b.w_split + (static_cast<long>(2 * step) * p.b.n_pad + n0) * 4;
    }
    __device__ const uint4* weight_step(int step) const { return weight_step(step, p.b.w_cores); }

    // Each thread owns one 4-column group (threads % 8 == 0) of rows tid/8, +threads/8, ...
    // Vec sources take their columns from `cursor` (this thread's k of `step`) and move it
    // on by a k-step: the loads come in step order.
    __device__ void load_activations(int stage, int step, column_cursor& cursor) const {
        float* dst = a_smem + stage * T::a_floats;
        const int group = threadIdx.x % 8, k = step * T::bk + group * 4;
        const float* data = p.a.view.data;
        if (p.a.vec) {
            // Columns k..k+3 share a tap (channels % 4 == 0) and are contiguous: a lookup
            // of the row's source for the tap, where resolving it here (ring wrap, the
            // session's start) was most of a k-step's instructions.
            const gemm_column col = cursor.col;
            cursor.advance(p, T::bk);
            // A row with no source (src -1, or the step past K) is zero-filled: nothing is
            // read, so its address is the step's base (mapped), not a selected pointer.
            const int* sources = tap_rows + col.tap * T::bm;
            const float4* at = reinterpret_cast<const float4*>(data + col.c);
            const bool live = col.shift >= 0;
#pragma unroll
            for (int j = 0; j < T::bm / T::a_rows_per_pass; ++j) {
                const int r = static_cast<int>(threadIdx.x) / 8 + j * T::a_rows_per_pass;
                const int src = sources[r];
                cp_async::copy16(dst + r * T::a_stride + group * 4, at + max(src, 0), live && src >= 0);
            }
            return;
        }
        gemm_column cols[4];
        for (int e = 0; e < 4; ++e) cols[e] = source_column(p, k + e);
        for (int r = threadIdx.x / 8; r < T::bm; r += T::a_rows_per_pass)
            for (int e = 0; e < 4; ++e) {
                const long off = source_offset(p, rows[r], cols[e]);
                dst[r * T::a_stride + group * 4 + e] = off < 0 ? 0.f : load_cg(data + off);
            }
    }

    __device__ void prepare_rows(int M) const {
        for (int r = threadIdx.x; r < T::bm; r += T::threads) rows[r] = source_row(p, m0 + r, M);
        if (!p.a.vec) return;
        for (int e = threadIdx.x; e < p.a.taps * T::bm; e += T::threads) {
            const int tap = e / T::bm, r = e % T::bm;
            // Offsets of vec sources are multiples of 4 (vocoder_program's vec()), and
            // vocoder_buffers keeps every tensor under 2^31 float4s.
            const long off = source_offset(p, source_row(p, m0 + r, M), tap_column(p, tap));
            tap_rows[e] = off < 0 ? -1 : static_cast<int>(off / 4);
        }
    }

    // 1 / rms of each tile row (an RMSNorm input: flat rows of width K), warp per row.
    __device__ void row_norms(int M, float* scale) const {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        for (int r = warp; r < T::bm; r += T::threads / 32) {
            if (m0 + r >= M) continue;
            const float* x = p.a.view.data + rows[r].base;
            float ss = 0.f;
#pragma unroll 4
            for (int k = lane; k < p.b.K; k += 32) {
                const float v = load_cg(x + k);
                ss += v * v;
            }
            for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
            if (lane == 0) scale[r] = 1.0f / sqrtf(ss / static_cast<float>(p.b.K) + p.epi.eps);
        }
    }

    // This warp's A fragments (hi and lo) of the 16-k half `kk` of a stage: lane (g, t)
    // reads k = t, t + 4, t + 8, t + 12 of the half (slot_order.h), from A rows g, g + 8 (4
    // banks apart, so the warp's 32 reads hit 32 banks).
    __device__ void split_half(const float* As, int kk, std::uint32_t (&a_hi)[T::mt][4],
                               std::uint32_t (&a_lo)[T::mt][4]) const {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        const int row0 = (warp / T::wn) * T::warp_rows;
#pragma unroll
        for (int i = 0; i < T::mt; ++i) {
            const float* a = As + (row0 + i * 16 + g) * T::a_stride + kk + t;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                // e: row g low slots, row g + 8 low, row g high, row g + 8 high.
                const float* p = a + (e % 2) * 8 * T::a_stride + (e / 2) * 8;
                const bf16x2_split s = split_bf16x2(p[0], p[4]);
                a_hi[i][e] = s.hi;
                a_lo[i][e] = s.lo;
            }
        }
    }

    // A k-step: with mma.sync, each half against W's split pairs for its k at column g;
    // with wgmma (gemm_wgmma), each half's three products issued as soon as that half is
    // split (the second half's split runs beside the first half's products), all done before
    // it returns (the stage is free again).
    __device__ void multiply(int stage, float (&acc)[T::mt][T::nt][4]) const {
        const float* As = a_smem + stage * T::a_floats;
        const uint4* Ws = w_smem + stage * T::w_words;
        if constexpr (gemm_wgmma<T>) {
            std::uint32_t a_hi[2][T::mt][4], a_lo[2][T::mt][4];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                split_half(As, 16 * h, a_hi[h], a_lo[h]);
                wgmma::fence();
                wgmma_bf16x3_half<T>(Ws, h, a_hi[h][0], a_lo[h][0], acc);
                wgmma::commit();
            }
            wgmma::wait<0>();
        } else {
            const int col0 = (static_cast<int>(threadIdx.x) / 32 % T::wn) * T::warp_cols;
#pragma unroll
            for (int kk = 0; kk < T::bk; kk += 16) {
                std::uint32_t a_hi[T::mt][4], a_lo[T::mt][4];
                split_half(As, kk, a_hi, a_lo);
                multiply_half<T>(Ws, kk, col0, a_hi, a_lo, acc);
            }
        }
    }
};

// Calls f(tile row, tile column, pointer to the pair) for each accumulator pair of
// this thread: rows g and g + 8 of each m16 tile, columns 2t, 2t + 1 of each n8 tile.
template <class T, class F>
__device__ __forceinline__ void for_each_pair(float (&acc)[T::mt][T::nt][4], F&& f) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row0 = (warp / T::wn) * T::warp_rows + lane / 4;
    const int col0 = (warp % T::wn) * T::warp_cols + 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < T::mt; ++i)
#pragma unroll
        for (int j = 0; j < T::nt; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) f(row0 + i * 16 + 8 * h, col0 + j * 8, acc[i][j] + 2 * h);
}

// A barrier of the tile's warps (T::threads): the whole block of conv_gemm's kernel, the
// consumer warps of conv_implicit's, whose producer warp has left by the time they finish
// the tile (barrier 0, __syncthreads, would wait for it).
template <class T>
__device__ __forceinline__ void tile_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(T::threads) : "memory");
}

// The two halves of a cluster barrier, for threads that may have diverged: arrive()
// releases the thread's shared-memory writes, wait() returns once every thread of the
// cluster that has not exited arrived, and acquires their writes.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }

// Split K within a cluster: rows [r0, r1) of the tile, each the sum of every split's
// partial row (split sp is cluster rank sp: the cluster spans gridDim.z), in split order
// as the workspace's path adds them, written over this block's own partial rows (no other
// block reads those: each sums only its own rows). The other blocks' tiles must be
// complete (a cluster barrier since they were written).
template <class T>
__device__ void add_cluster_partials(int splits, float* out, int r0, int r1) {
    const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    constexpr int vecs = T::bn / 4, in_flight = 8;
#pragma unroll 1
    for (int e = threadIdx.x; e < (r1 - r0) * vecs; e += T::threads) {
        float* at = out + (r0 + e / vecs) * T::out_stride + (e % vecs) * 4;
        float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 1
        for (int first = 0; first < splits; first += in_flight) {
            float4 part[in_flight];
#pragma unroll
            for (int i = 0; i < in_flight; ++i)
                if (first + i < splits) part[i] = *reinterpret_cast<const float4*>(cluster.map_shared_rank(at, first + i));
#pragma unroll
            for (int i = 0; i < in_flight; ++i) {
                if (first + i >= splits) break;
                sum.x += part[i].x;
                sum.y += part[i].y;
                sum.z += part[i].z;
                sum.w += part[i].w;
            }
        }
        *reinterpret_cast<float4*>(at) = sum;
    }
}

// The split-K paths of a kernel instantiation (finish_tile). conv_gemm_kernel has a
// `workspace` and a `cluster` instantiation of each tile that may sum in clusters: with both
// paths in one kernel, its launches were 0.5-7 us slower whichever path they took or with no
// split at all (an H200 at B = 1, Nsight Compute: block 1's transposed conv 34.1 -> 27.7 us,
// block 3's 1x1 convs 10.6-13.3 -> 9.3-10.2, the upsamplers' products 1-2 us each; a call
// 0.672 -> 0.627 ms). conv_implicit_kernel keeps `either`: split the same way it was slower
// (every implicit launch about 1 us at B = 1, the call 0.628 -> 0.636 ms, 0.868 -> 0.901 at B =
// 4; branch wip/implicit-split-sums, bench/RESULTS.md 2026-11-30).
enum class split_sums { workspace, cluster, either };

// Whether a tile's split K may add up within clusters (gemm_params.h's bound), so that its
// kernels have a cluster path.
template <class T>
inline constexpr bool has_cluster_sum = T::bm <= k_max_cluster_sum_rows;

template <class T, bool Share>
__device__ void finish_rows(const gemm_params& p, const float* out, float* smem, const float* scale, int M, int m0,
                            int n0, int r0, int r1);
template <class T>
__device__ void finish_workspace_tile(const gemm_params& p, float* out, float* smem, const float* scale, int M, int m0,
                                      int n0, int split);

// After a block's k-loop: the tile through shared memory (the pipeline's buffers, which
// the caller's k-loop is done with: `smem` holds at least T::res_offset + BM x BN floats),
// split K's sum in split order, and the epilogue. `scale`: 1 / rms per tile row where
// p.epi.row_norm, else unused. Every thread of the tile's warps (T::threads) calls it.
// S: the split-K paths the calling kernel holds (split_sums).
template <class T, split_sums S>
__device__ void finish_tile(const gemm_params& p, float (&acc)[T::mt][T::nt][4], float* smem, const float* scale,
                            int M, int m0, int n0, int split) {
    // The finished tile goes through shared memory (the pipeline's buffers are free
    // now), and what follows are plain loops over it: one copy of the epilogue's code,
    // not one per accumulator pair. Unrolled per pair, the epilogue made the kernel
    // 25,000 instructions long and its blocks stalled on instruction fetch.
    cp_async::wait_groups<0>();
    tile_sync<T>();  // every warp is done with the pipeline; row norms are visible
    float* out = smem;
    for_each_pair<T>(acc, [&](int r, int c, float* v) {
        *reinterpret_cast<float2*>(out + r * T::out_stride + c) = make_float2(v[0], v[1]);
    });
    tile_sync<T>();

    if constexpr (S != split_sums::workspace) {
        static_assert(has_cluster_sum<T>);
        if (S == split_sums::cluster || (p.splits > 1 && p.cluster_sum)) {
            // Each split adds up and finishes its share of the tile's rows. A block's shared
            // memory must outlive the other blocks' reads of it: the second arrival says they
            // are done, and every block waits for it before it leaves.
            cluster_arrive();
            cluster_wait();
            const int share = (T::bm + p.splits - 1) / p.splits;
            const int r0 = min(T::bm, split * share), r1 = min(T::bm, r0 + share);
            add_cluster_partials<T>(p.splits, out, r0, max(r0, min(r1, M - m0)));
            cluster_arrive();
            finish_rows<T, true>(p, out, smem, scale, M, m0, n0, r0, r1);
            cluster_wait();
            return;
        }
    }
    if constexpr (S != split_sums::cluster) finish_workspace_tile<T>(p, out, smem, scale, M, m0, n0, split);
}

// finish_tile's workspace path: split K's partial tiles through global memory (where
// p.splits > 1), then the whole tile's epilogue.
template <class T>
__device__ void finish_workspace_tile(const gemm_params& p, float* out, float* smem, const float* scale, int M, int m0,
                                      int n0, int split) {
    __shared__ int is_last;
    if (p.splits > 1) {
        // Split K: each split leaves its partial tile; the last to finish adds them all,
        // in split order, so the sum has the same bits whichever split came last.
        const long tile = static_cast<long>(blockIdx.y) * gridDim.x + blockIdx.x;
        float* partials = p.workspace + tile * p.splits * T::bm * T::bn;
        float* mine = partials + static_cast<long>(split) * T::bm * T::bn;
#pragma unroll 1
        for (int e = threadIdx.x; e < T::bm * T::bn / 4; e += T::threads) {
            const int r = e / (T::bn / 4), c = (e % (T::bn / 4)) * 4;
            *reinterpret_cast<float4*>(mine + r * T::bn + c) = *reinterpret_cast<const float4*>(out + r * T::out_stride + c);
        }
        tile_sync<T>();
        if (threadIdx.x == 0) is_last = take_ticket(p.counters + tile) == static_cast<unsigned>(p.splits - 1);
        tile_sync<T>();
        if (!is_last) return;
        // Four of this thread's float4s at a time, unrolled over four splits: sixteen
        // loads in flight (one L2 latency per sixteen, where one block reads every
        // split's tile); the adds stay in split order.
        constexpr int vecs = T::bm * T::bn / 4 / T::threads, group = vecs < 4 ? vecs : 4;
        static_assert(T::bm * T::bn / 4 % T::threads == 0 && vecs % group == 0);
#pragma unroll 1
        for (int g0 = 0; g0 < vecs; g0 += group) {
            int at[group];
            bool used[group];
            float4 sum[group];
#pragma unroll
            for (int g = 0; g < group; ++g) {
                const int e = threadIdx.x + (g0 + g) * T::threads;
                const int r = e / (T::bn / 4), c = (e % (T::bn / 4)) * 4;
                at[g] = r * T::bn + c;
                used[g] = m0 + r < M;
                sum[g] = make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll 4
            for (int sp = 0; sp < p.splits; ++sp) {
                const float* part = partials + static_cast<long>(sp) * T::bm * T::bn;
#pragma unroll
                for (int g = 0; g < group; ++g) {
                    if (!used[g]) continue;
                    const float4 v = __ldcg(reinterpret_cast<const float4*>(part + at[g]));
                    sum[g].x += v.x;
                    sum[g].y += v.y;
                    sum[g].z += v.z;
                    sum[g].w += v.w;
                }
            }
#pragma unroll
            for (int g = 0; g < group; ++g) {
                const int e = threadIdx.x + (g0 + g) * T::threads;
                const int r = e / (T::bn / 4), c = (e % (T::bn / 4)) * 4;
                if (used[g]) *reinterpret_cast<float4*>(out + r * T::out_stride + c) = sum[g];
            }
        }
        if (threadIdx.x == 0) p.counters[tile] = 0;
        tile_sync<T>();
    }
    finish_rows<T, false>(p, out, smem, scale, M, m0, n0, 0, T::bm);
}

// The epilogue of tile rows [r0, r1) (finish_tile's sums in `out`; its first block barrier
// makes them visible to every thread). Share: a split's share of the rows; else the whole
// tile (r0 = 0, r1 = BM), whose row checks are then known at compile time.
template <class T, bool Share>
__device__ void finish_rows(const gemm_params& p, const float* out, float* smem, const float* scale, int M, int m0,
                            int n0, int r0, int r1) {
    epi_row* epi_rows = reinterpret_cast<epi_row*>(smem + T::epi_rows_offset);
    for (int r = r0 + static_cast<int>(threadIdx.x); r < r1; r += T::threads)
        if (m0 + r < M) epi_rows[r] = resolve_row(p, m0 + r);
    tile_sync<T>();
    // This thread's pairs: columns c, c + 1 of rows first_row, + row_step, ... Their
    // residuals are all requested before the first store (then parked in shared memory,
    // so that the loop over pairs need not be unrolled to keep them in registers).
    const int c = (threadIdx.x % T::pair_cols) * 2, n = n0 + c, first_row = threadIdx.x / T::pair_cols;
    constexpr int row_step = T::epi_row_step;
    if (threadIdx.x >= T::epi_threads || n >= p.b.N) return;
    const epi_columns cols = load_columns(p, n);
    float2* res_tile = reinterpret_cast<float2*>(smem + T::res_offset);  // [bm][pair_cols]
    auto live = [&](int r) { return (Share ? r >= r0 && r < r1 : T::bm % row_step == 0 || r < T::bm) && m0 + r < M; };
    if (p.epi.res.data) {
        float2 res[T::pairs_per_thread];
#pragma unroll
        for (int k = 0; k < T::pairs_per_thread; ++k) {
            const int r = first_row + k * row_step;
            res[k] = live(r) ? load_residual(p, epi_rows[r], cols) : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int k = 0; k < T::pairs_per_thread; ++k) {
            const int r = first_row + k * row_step;
            if (T::bm % row_step == 0 || r < T::bm) res_tile[r * T::pair_cols + c / 2] = res[k];
        }
    }
    auto res_of = [&](int r) { return p.epi.res.data ? res_tile[r * T::pair_cols + c / 2] : make_float2(0.f, 0.f); };
    if (plain_epilogue(p)) {
        // The decoder blocks' convs: a loop of its own without finish_pair's checks.
#pragma unroll 2
        for (int k = 0; k < T::pairs_per_thread; ++k) {
            const int r = first_row + k * row_step;
            if (live(r))
                finish_plain_pair(p, epi_rows[r], cols, res_of(r), out[r * T::out_stride + c],
                                  out[r * T::out_stride + c + 1]);
        }
        return;
    }
#pragma unroll 2
    for (int k = 0; k < T::pairs_per_thread; ++k) {
        const int r = first_row + k * row_step;
        if (live(r))
            finish_pair(p, epi_rows[r], n, cols, res_of(r), out[r * T::out_stride + c], out[r * T::out_stride + c + 1],
                        p.epi.row_norm ? scale[r] : 1.f);
    }
}

template <class T, split_sums S>
__global__ void __launch_bounds__(T::threads, T::min_blocks) conv_gemm_kernel(const __grid_constant__ gemm_params p) {
    extern __shared__ __align__(16) float smem[];
    __shared__ gemm_row rows[T::bm];
    __shared__ int tap_rows[k_max_gemm_taps * T::bm];
    __shared__ float scale[T::bm];

    const auto [m0, n0, split, M, first_step, steps] = tile_range_of<T>(p);
    if (m0 >= M) {
        wait_for_predecessor();
        return;
    }
    const gemm_block<T> blk{p, smem, reinterpret_cast<uint4*>(smem + T::stages * T::a_floats), rows, tap_rows, m0, n0};

    // Weights do not depend on the predecessor: stream them while it finishes. They
    // join the first commit group below, so the group accounting is unchanged. Nor do
    // the A rows' places, which come from the batch description alone.
    for (int s = 0; s < T::stages - 1; ++s)
        if (s < steps) blk.load_weights(s, blk.weight_step(first_step + s));
    blk.prepare_rows(M);
    column_cursor cursor(p, first_step * T::bk + static_cast<int>(threadIdx.x % 8) * 4);
    wait_for_predecessor();
    __syncthreads();
    for (int s = 0; s < T::stages - 1; ++s) {
        if (s < steps) blk.load_activations(s, first_step + s, cursor);
        cp_async::commit();
    }
    if (p.epi.row_norm) blk.row_norms(M, scale);

    // The stages in turn and the next step's weights by increments, not a modulo by the
    // stage count and a 64-bit product per k-step.
    float acc[T::mt][T::nt][4] = {};
    const uint4* w_next = blk.weight_step(first_step + T::stages - 1);
    const long w_step = 2L * p.b.n_pad * 4;
    int stage = 0, next_stage = T::stages - 1;
    for (int s = 0; s < steps; ++s) {
        cp_async::wait_groups<T::stages - 2>();  // this thread's copies of step s have landed
        if constexpr (gemm_wgmma<T>) wgmma::publish_shared();  // the weights, to the tensor cores' reads
        __syncthreads();  // everyone's have, and step s - 1's buffers are free
        const int next = s + T::stages - 1;
        if (next < steps) {
            blk.load_weights(next_stage, w_next);
            blk.load_activations(next_stage, first_step + next, cursor);
        }
        cp_async::commit();
        blk.multiply(stage, acc);
        w_next += w_step;
        stage = stage + 1 == T::stages ? 0 : stage + 1;
        next_stage = next_stage + 1 == T::stages ? 0 : next_stage + 1;
    }
    allow_successor();
    finish_tile<T, S>(p, acc, smem, scale, M, m0, n0, split);
}

}  // namespace megatts::voc

// conv_implicit: conv_gemm for the decoder blocks' causal convs with several taps (the
// residual units' k = 7 dilated convs, the upsampling transposed convs' 2 taps), as an
// implicit GEMM. conv_gemm reads A one (tap, 32 channels) k-step at a time, so each input
// row is copied from L2 and split into its bf16 pair once per tap. Here a block stages a
// 32-channel chunk of every input row its tile needs (its rows and the (taps - 1) x
// dilation rows of left context before each session's run of rows) once, splits it once
// into bf16 hi and lo planes, and the chunk's taps read their A fragments from those
// planes with ldmatrix at a row offset of tap x dilation. The products, their order in K
// (chunk by chunk, tap by tap within a chunk) aside, are conv_gemm's bf16x3 steps: on
// sm_90a as warpgroup wgmma steps (wgmma.cuh) with the weights as core matrices
// (w_cores), which take B from shared memory without a fragment load per warp; elsewhere
// as mma.sync on w_split.
//
// Contract (device; launched by vocoder_kernels.cu with grid (ceil(N / BN),
// ceil(M_max / BM), splits), T's threads and implicit_smem_bytes(T, p.a.staged_rows)
// of dynamic shared memory; vocoder_program sets p.a.staged_rows only for such a
// product): A is a ring with at least k_implicit_min_taps taps, channels a multiple of
// 32 and 16-byte sources (p.a.vec); K = taps x channels; no row norm; T's warps are 16
// rows by the whole tile width (vocoder_kernels.cu's implicit tiles), so gemm_wgmma<T>
// on sm_90a. p.a.staged_rows bounds the rows any tile of the call stages (staged_rows_of_tile()).
// Split K splits whole chunks: steps_per_split is a multiple of taps. Otherwise
// conv_gemm.cuh's contract, whose finish_tile() this kernel ends with.
#pragma once

#include "kernels/vocoder/conv_gemm.cuh"
#include "kernels/vocoder/implicit_pipeline.h"
#include "kernels/vocoder/implicit_staging.h"
#include "kernels/vocoder/wgmma.cuh"

namespace megatts::voc {

// Shared memory: the weights' stages first (16-byte words), then the landing rows (32
// f32 each, as read), the hi plane, the lo plane (k_implicit_plane_stride bf16 a row),
// and the staged rows' sources (ints).
template <class T>
struct implicit_layout {
    static constexpr int w_bytes = T::stages * T::w_words * 16;
    static constexpr int epilogue_bytes = (T::res_offset + T::bm * T::bn) * 4;
    static constexpr int landing_offset = w_bytes;
    __host__ __device__ static constexpr int hi_offset(int staged) { return landing_offset + staged * k_implicit_chunk * 4; }
    __host__ __device__ static constexpr int lo_offset(int staged) {
        return hi_offset(staged) + staged * k_implicit_plane_stride * 2;
    }
    __host__ __device__ static constexpr int sources_offset(int staged) {
        return lo_offset(staged) + staged * k_implicit_plane_stride * 2;
    }
    __host__ __device__ static constexpr int smem_bytes(int staged) {
        const int pipeline = sources_offset(staged) + staged * 4;
        return pipeline > epilogue_bytes ? pipeline : epilogue_bytes;
    }
};

template <class T>
struct implicit_block {
    const gemm_params& p;
    uint4* w_smem;
    float* landing;
    std::uint16_t* hi;
    std::uint16_t* lo;
    int* sources;  // [staged] float4 offset of the staged row's channel 0 in the ring, -1: zeros
    int staged;    // this tile's staged rows
    int m0, n0;

    // W's k-step `w_step` into stage `stage`, as conv_gemm loads it (its A members unused).
    __device__ void load_weights(int stage, int w_step) const {
        const gemm_block<T> w{p, nullptr, w_smem, nullptr, nullptr, m0, n0};
        w.load_weights(stage, w.weight_step(w_step));
    }

    // Where each staged row comes from (implicit_staging.h), and this tile's staged row
    // count. Needs only the batch description (before the dependency wait).
    __device__ void prepare(const tile_staging& st) {
        staged = staged_rows(st);
        const act_view& v = p.a.view;
        for (int i = threadIdx.x; i < staged; i += T::threads) {
            const int j = staged_run(st, i);
            const item_desc& it = p.batch->items[m0 / st.n + j];
            const long t = staged_time(st, i, j, it.frame);
            sources[i] = t < 0 ? -1
                               : static_cast<int>((it.slot * v.slot_stride + (t % v.ring_rows) * v.width) / 4);
        }
    }

    // Channels chunk x 32.. of every staged row into the landing rows.
    __device__ void load_chunk(int chunk) const {
        const float4* data = reinterpret_cast<const float4*>(p.a.view.data) + chunk * (k_implicit_chunk / 4);
        for (int e = threadIdx.x; e < staged * 8; e += T::threads) {
            const int src = sources[e / 8];
            cp_async::copy16(landing + e * 4, data + max(src, 0) + e % 8, src >= 0);
        }
    }

    // The landing rows split into the planes. Slots as conv_gemm's multiply takes them:
    // of each 16 channels, t + 4 h + 8 q goes to slot 2 t + h + 8 q, so that ldmatrix
    // gives lane (g, t) the pairs (t, t + 4) and (t + 8, t + 12) that W's split has for it.
    // A thread splits 8 channels (two float4s: h = 0 and h = 1 for its t = 0..3) into
    // one 16-byte word of each plane.
    __device__ void split_chunk() const {
        for (int e = threadIdx.x; e < staged * 4; e += T::threads) {
            const int row = e / 4, group = e % 4;
            const float4 a = *reinterpret_cast<const float4*>(landing + row * k_implicit_chunk + group * 8);
            const float4 b = *reinterpret_cast<const float4*>(landing + row * k_implicit_chunk + group * 8 + 4);
            const bf16x2_split s0 = split_bf16x2(a.x, b.x), s1 = split_bf16x2(a.y, b.y);
            const bf16x2_split s2 = split_bf16x2(a.z, b.z), s3 = split_bf16x2(a.w, b.w);
            const int at = row * k_implicit_plane_stride + group * 8;
            *reinterpret_cast<uint4*>(hi + at) = make_uint4(s0.hi, s1.hi, s2.hi, s3.hi);
            *reinterpret_cast<uint4*>(lo + at) = make_uint4(s0.lo, s1.lo, s2.lo, s3.lo);
        }
    }

    // One tap of the staged chunk: `rows[i]` is this lane's ldmatrix row (tap 0) of its
    // warp's m16 tile i. With wgmma (sm_90a) each warpgroup's 64 rows by the stage's BN
    // columns (wgmma_bf16x3), returning with the products still running: the next step's
    // multiply() waits for them before it rewrites the A registers, and the stage is
    // refilled two steps later (`ahead`). Elsewhere mma.sync, done when it returns.
    __device__ void multiply(int stage, int tap, const int (&rows)[T::mt], float (&acc)[T::mt][T::nt][4]) const {
        const int lane = threadIdx.x % 32;
        const int shift = tap * p.a.dilation;
        if constexpr (gemm_wgmma<T>) {
            const int at = (rows[0] + shift) * k_implicit_plane_stride + 8 * (lane / 16);
            wgmma::wait<0>();  // the previous step's products are done with the A registers
            std::uint32_t a_hi[2][1][4], a_lo[2][1][4];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                ldmatrix_x4(a_hi[h][0], hi + at + 16 * h);
                ldmatrix_x4(a_lo[h][0], lo + at + 16 * h);
            }
            wgmma_bf16x3<T>(w_smem + stage * T::w_words, a_hi, a_lo, acc);
        } else {
            const uint4* Ws = w_smem + stage * T::w_words;
            const int col0 = (static_cast<int>(threadIdx.x) / 32 % T::wn) * T::warp_cols;
#pragma unroll
            for (int kk = 0; kk < k_implicit_chunk; kk += 16) {
                std::uint32_t a_hi[T::mt][4], a_lo[T::mt][4];
#pragma unroll
                for (int i = 0; i < T::mt; ++i) {
                    const int at = (rows[i] + shift) * k_implicit_plane_stride + kk + 8 * (lane / 16);
                    ldmatrix_x4(a_hi[i], hi + at);
                    ldmatrix_x4(a_lo[i], lo + at);
                }
                multiply_half<T>(Ws, kk, col0, a_hi, a_lo, acc);
            }
        }
    }

    __device__ static void ldmatrix_x4(std::uint32_t (&r)[4], const std::uint16_t* row) {
        const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(at));
    }
};

// How many steps ahead a step's weights are requested. With wgmma a step's products are
// still running when the next step begins (multiply() waits for them before it loads its
// A registers), so the stage they read is rewritten no sooner than two steps later.
template <class T>
inline constexpr int ahead = gemm_wgmma<T> ? T::stages - 2 : T::stages - 1;

template <class T>
__global__ void __launch_bounds__(T::threads, T::min_blocks) conv_implicit_kernel(const __grid_constant__ gemm_params p) {
    extern __shared__ __align__(16) float smem[];
    using L = implicit_layout<T>;
    char* base = reinterpret_cast<char*>(smem);
    const int cap = p.a.staged_rows;

    const auto [m0, n0, split, M, first_step, steps] = tile_range_of<T>(p);
    if (m0 >= M) {
        wait_for_predecessor();
        return;
    }
    implicit_block<T> blk{p,
                          reinterpret_cast<uint4*>(base),
                          reinterpret_cast<float*>(base + L::landing_offset),
                          reinterpret_cast<std::uint16_t*>(base + L::hi_offset(cap)),
                          reinterpret_cast<std::uint16_t*>(base + L::lo_offset(cap)),
                          reinterpret_cast<int*>(base + L::sources_offset(cap)),
                          0,
                          m0,
                          n0};

    // Step s of the split is tap s % taps of chunk s / taps; its weights are W's k-step
    // tap x chunks + chunk. The loop follows the step whose weights it requests by
    // increments (as a division by taps, it was some 20 instructions a step).
    const int taps = p.a.taps, chunks = p.a.channels / k_implicit_chunk;
    const int first_chunk = first_step / taps;
    int w_tap = 0, w_chunk = first_chunk;  // of the next step whose weights are requested
    auto w_advance = [&] {
        if (++w_tap == taps) {
            w_tap = 0;
            ++w_chunk;
        }
    };
    for (int s = 0; s < ahead<T>; ++s) {
        if (s < steps) blk.load_weights(s, w_tap * chunks + w_chunk);
        w_advance();
    }
    const tile_staging st{m0, min(T::bm, M - m0), p.rows_per_frame, (taps - 1) * p.a.dilation};
    blk.prepare(st);
    int rows[T::mt];
    {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int row0 = (warp / T::wn) * T::warp_rows + (lane % 8) + 8 * ((lane / 8) % 2);
#pragma unroll
        for (int i = 0; i < T::mt; ++i) rows[i] = tap0_staged_row(st, row0 + i * 16);
    }
    wait_for_predecessor();
    __syncthreads();  // the sources are visible
    blk.load_chunk(first_chunk);
    for (int s = 0; s < ahead<T>; ++s) cp_async::commit();

    float acc[T::mt][T::nt][4] = {};
    int stage = 0, next_stage = ahead<T>, tap = 0, chunk = first_chunk;
    for (int s = 0; s < steps; ++s) {
        cp_async::wait_groups<ahead<T> - 1>();  // step s's weights have landed
        // A chunk's rows were issued at its predecessor's first tap, `taps` steps before its
        // own: in by the wait above where taps >= ahead (implicit_pipeline.h).
        if (tap == 0 && taps < ahead<T>)
            cp_async::wait_groups_at_most<ahead<T> - 1>(implicit_chunk_pending(taps, ahead<T>));
        if constexpr (gemm_wgmma<T>) wgmma::publish_shared();  // the weights, to the tensor cores' reads
        __syncthreads();  // everyone's have, and the stage this step refills is free
        if (tap == 0) {
            blk.split_chunk();
            __syncthreads();  // the planes are written and the landing rows read
            // The next chunk lands during this chunk's taps (taps >= ahead: it is in
            // by the next chunk's first wait).
            if (s + taps < steps) blk.load_chunk(chunk + 1);
        }
        const int next = s + ahead<T>;
        if (next < steps) blk.load_weights(next_stage, w_tap * chunks + w_chunk);
        w_advance();
        cp_async::commit();
        blk.multiply(stage, tap, rows, acc);
        stage = stage + 1 == T::stages ? 0 : stage + 1;
        next_stage = next_stage + 1 == T::stages ? 0 : next_stage + 1;
        if (++tap == taps) {
            tap = 0;
            ++chunk;
        }
    }
    if constexpr (gemm_wgmma<T>) wgmma::wait<0>();  // the last step's products
    allow_successor();
    finish_tile<T>(p, acc, smem, nullptr, M, m0, n0, split);
}

}  // namespace megatts::voc

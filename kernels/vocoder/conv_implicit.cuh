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
// as mma.sync on w_split. A product whose matrix carries w_tf32 (the residual units' 7-tap
// convs, cuda_vocoder_limits::tf32_convs) instead multiplies TF32 operands on sm_90a: no
// planes, the chunk's rows rounded where they land (conv_implicit_kernel's Tf32).
//
// The weights come from a producer warp: one bulk copy (mbarrier.cuh) per step into a ring
// of T::stages stages, each with a "full" barrier the tile's warps wait on and an "empty"
// one each of them arrives on once its products are done with it. So the tile's warps meet
// at a block barrier only twice a chunk (around its split), not at every step (an H100 at B
// = 64: the 7-tap convs 2.07 -> 1.80 ms, where with a barrier a step their warps had issued
// 0.4 instructions a cycle per scheduler).
//
// Contract (device, sm_90+; launched by vocoder_kernels.cu, the Tf32 instantiation where
// p.b.w_tf32 is set, with grid (ceil(N / BN),
// ceil(M_max / BM), splits), implicit_threads<T> threads (T's warps and the producer warp)
// and implicit_smem_bytes(T, p.a.staged_rows) of dynamic shared memory; vocoder_program
// sets p.a.staged_rows only for such a product): A is a ring with at least
// k_implicit_min_taps taps, channels a multiple of 32 and 16-byte sources (p.a.vec); K =
// taps x channels; no row norm; T's warps are 16 rows by the whole tile width
// (vocoder_kernels.cu's implicit tiles), so gemm_wgmma<T> on sm_90a. p.a.staged_rows bounds
// the rows any tile of the call stages (staged_rows_of_tile()). Split K splits whole chunks:
// steps_per_split is a multiple of taps. Otherwise conv_gemm.cuh's contract, whose
// finish_tile() this kernel's tile warps end with (its cluster barriers, where the splits
// are a cluster, wait for the producer warp's threads only until they exit, which they do
// once the last weights are requested).
#pragma once

#include "kernels/common/mbarrier.cuh"
#include "kernels/vocoder/conv_gemm.cuh"
#include "kernels/vocoder/implicit_staging.h"
#include "kernels/vocoder/wgmma.cuh"

namespace megatts::voc {

// f32 between two rows of a TF32 landing buffer: 144 bytes, so that the 8 row addresses of an
// ldmatrix phase (consecutive rows) fall in 8 distinct 16-byte bank groups.
inline constexpr int k_tf32_row_floats = k_implicit_chunk + 4;

// Shared memory: the weights' stages first (16-byte words), then the landing rows (32
// f32 each, as read), the hi plane, the lo plane (k_implicit_plane_stride bf16 a row),
// and the staged rows' sources (ints). TF32 products (Tf32 below) use the landing rows' and
// planes' bytes as two landing buffers of k_tf32_row_floats a row instead.
template <class T>
struct implicit_layout {
    static constexpr int w_bytes = T::stages * T::w_words * 16;
    static constexpr int epilogue_bytes = T::epilogue_floats * 4;
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
    __host__ __device__ static constexpr int tf32_buffer_offset(int staged, int buffer) {
        return landing_offset + buffer * staged * k_tf32_row_floats * 4;
    }
    static_assert(2 * k_tf32_row_floats * 4 <= k_implicit_chunk * 4 + 2 * k_implicit_plane_stride * 2,
                  "two TF32 landing rows take no more than a landing row and its planes");
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

    // Channels chunk x 32.. of every staged row into `rows`, RowFloats apart: the landing rows
    // (k_implicit_chunk: piece e at 4e, as the compiler would not find by itself) or a TF32
    // landing buffer (k_tf32_row_floats).
    template <int RowFloats>
    __device__ void load_chunk(int chunk, float* rows) const {
        const float4* data = reinterpret_cast<const float4*>(p.a.view.data) + chunk * (k_implicit_chunk / 4);
        for (int e = threadIdx.x; e < staged * 8; e += T::threads) {
            const int src = sources[e / 8];
            const int at = RowFloats == k_implicit_chunk ? e * 4 : (e / 8) * RowFloats + (e % 8) * 4;
            cp_async::copy16(rows + at, data + max(src, 0) + e % 8, src >= 0);
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

    // A TF32 landing buffer's rows (load_chunk's), rounded to TF32 in place by the threads that
    // copied them (no barrier between; cvt.rna, as the reference's TF32 model rounds).
    __device__ void round_chunk_tf32(float* rows) const {
        for (int e = threadIdx.x; e < staged * 8; e += T::threads) {
            float4* at = reinterpret_cast<float4*>(rows + (e / 8) * k_tf32_row_floats + (e % 8) * 4);
            const float4 v = *at;
            *reinterpret_cast<uint4*>(at) =
                make_uint4(wgmma::round_tf32(v.x), wgmma::round_tf32(v.y), wgmma::round_tf32(v.z), wgmma::round_tf32(v.w));
        }
    }

    // This lane's TF32 A fragment of k8 step `u` (channels 8u .. 8u + 7 of the chunk) of one tap,
    // from landing buffer `rows`: ldmatrix's four 8 x 8 b16 matrices as 8 x 4 f32 ones, (rows
    // 0-7, k 0-3), (8-15, 0-3), (0-7, 4-7), (8-15, 4-7), give lane (g, t) the m16n8k8 TF32 A
    // fragment (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
    __device__ void load_a_tf32(const float* rows, int tap, int u, int row, std::uint32_t (&a)[4]) const {
        const float* at = rows + (row + tap * p.a.dilation) * k_tf32_row_floats + 8 * u +
                          4 * (static_cast<int>(threadIdx.x) % 32 / 16);
        ldmatrix_x4(a, reinterpret_cast<const std::uint16_t*>(at));
    }

    // This lane's A fragments of 16-k half `h` of one tap of the staged chunk (wgmma tiles),
    // hi and lo, for the lane's ldmatrix row `row` (tap 0) of its warp's m16 tile.
    __device__ void load_a(int tap, int h, int row, std::uint32_t (&a_hi)[4], std::uint32_t (&a_lo)[4]) const {
        const int at = (row + tap * p.a.dilation) * k_implicit_plane_stride + 8 * (static_cast<int>(threadIdx.x) % 32 / 16) +
                       16 * h;
        ldmatrix_x4(a_hi, hi + at);
        ldmatrix_x4(a_lo, lo + at);
    }

    // One tap of the staged chunk with mma.sync (tiles other than gemm_wgmma's): `rows[i]` is
    // this lane's ldmatrix row (tap 0) of its warp's m16 tile i. Done with the stage when it
    // returns.
    __device__ void multiply(int stage, int tap, const int (&rows)[T::mt], float (&acc)[T::mt][T::nt][4]) const {
        const int lane = threadIdx.x % 32;
        const int shift = tap * p.a.dilation;
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

    __device__ static void ldmatrix_x4(std::uint32_t (&r)[4], const std::uint16_t* row) {
        const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(row));
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(at));
    }
};

// The two k8 TF32 products of 16-k half `h` of a k-step (wgmma tiles): A fragments a0 (k 16h ..
// 16h + 7) and a1 (16h + 8 ..) against the stage's TF32 core matrices (w_tf32: per 8-column
// group, 8 cores of 4 k, 128 bytes each). Issues only, as wgmma_bf16x3_half.
template <class T>
__device__ __forceinline__ void wgmma_tf32_half(const uint4* Ws, int h, const std::uint32_t (&a0)[4],
                                                const std::uint32_t (&a1)[4], float (&acc)[1][T::nt][4]) {
    constexpr int group_bytes = 8 * wgmma::k_core_bytes;
    const char* w = reinterpret_cast<const char*>(Ws);
    float(&d)[T::bn / 2] = *reinterpret_cast<float(*)[T::bn / 2]>(&acc[0][0][0]);
    wgmma::mma_tf32<T::bn>(d, a0, wgmma::descriptor(w + 4 * h * wgmma::k_core_bytes, group_bytes));
    wgmma::mma_tf32<T::bn>(d, a1, wgmma::descriptor(w + (4 * h + 2) * wgmma::k_core_bytes, group_bytes));
}

__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

// The block's threads: the tile's warps, then the producer warp.
template <class T>
inline constexpr int implicit_threads = T::threads + 32;

// Where a split's step stands: its stage of the ring and the parity of that stage's
// barriers' phase, its tap and chunk. The producer and the tile's warps walk the steps
// alike, by increments (as a division by taps it was some 20 instructions a step).
template <class T>
struct step_cursor {
    int stage, tap, chunk;
    unsigned phase;

    __device__ void advance(int taps) {
        if (++stage == T::stages) {
            stage = 0;
            phase ^= 1;
        }
        if (++tap == taps) {
            tap = 0;
            ++chunk;
        }
    }
};

// The producer: the weights of the split's steps in order, step s into stage s % stages once
// the tile's warps have given that stage back from step s - stages. Step s is tap s % taps
// of chunk first_chunk + s / taps, W's k-step tap x chunks + chunk. A wgmma stage is one
// run of w_cores, a mma.sync stage two of w_split (conv_gemm's load_weights()).
template <class T, bool Tf32>
__device__ void produce_weights(const gemm_params& p, uint4* w_smem, std::uint64_t* full, std::uint64_t* empty, int n0,
                                int first_chunk, int steps) {
    const int taps = p.a.taps, chunks = p.a.channels / k_implicit_chunk;
    const gemm_block<T> w{p, nullptr, w_smem, nullptr, nullptr, 0, n0};
    constexpr unsigned stage_bytes = T::w_words * 16;
    step_cursor<T> at{0, 0, first_chunk, 0};
    for (int s = 0; s < steps; ++s, at.advance(taps)) {
        if (s >= T::stages) mbarrier::wait(&empty[at.stage], at.phase ^ 1);  // given back from step s - stages
        mbarrier::arrive_expect_tx(&full[at.stage], stage_bytes);
        // w_tf32's k-steps are laid out as w_cores' are (weight_layouts.h).
        const uint4* src = w.weight_step(at.tap * chunks + at.chunk, Tf32 ? p.b.w_tf32 : p.b.w_cores);
        uint4* dst = w_smem + at.stage * T::w_words;
        if constexpr (gemm_wgmma<T>) {
            mbarrier::bulk_copy(dst, src, stage_bytes, &full[at.stage]);
        } else {
#pragma unroll
            for (int h = 0; h < 2; ++h)
                mbarrier::bulk_copy(dst + h * T::bn * 4, src + h * p.b.n_pad * 4, stage_bytes / 2, &full[at.stage]);
        }
    }
}

// Tf32: the product multiplies TF32 operands from p.b.w_tf32 (sm_90a only; elsewhere the
// instantiation is the bf16x3 one): each chunk's rows land in one of two landing buffers,
// are rounded there by the threads that copied them, and each step's four k8 products read
// their A fragments from the buffer with ldmatrix. No split, no planes, one block barrier a
// chunk instead of two, and a step's tensor work two k8 TF32 products a 16 k where bf16x3
// issues three k16 bf16 ones (a TF32 product takes a bf16 one's time for half the k).
template <class T, bool Tf32>
__global__ void __launch_bounds__(implicit_threads<T>, T::min_blocks)
    conv_implicit_kernel(const __grid_constant__ gemm_params p) {
    constexpr bool tf32 = Tf32 && gemm_wgmma<T>;
    extern __shared__ __align__(16) float smem[];
    __shared__ std::uint64_t full[T::stages], empty[T::stages];
    using L = implicit_layout<T>;
    char* base = reinterpret_cast<char*>(smem);
    const int cap = p.a.staged_rows;

    const auto [m0, n0, split, M, first_step, steps] = tile_range_of<T>(p);
    if (m0 >= M) {
        wait_for_predecessor();
        return;
    }
    const int taps = p.a.taps, first_chunk = first_step / taps;
    if (threadIdx.x == 0)
        for (int i = 0; i < T::stages; ++i) {
            mbarrier::init(&full[i], 1);
            mbarrier::init(&empty[i], T::threads / 32);
        }
    __syncthreads();  // the barriers are initialised (the last barrier of all the block's threads)
    if (threadIdx.x >= T::threads) {
        // Weights never change: the producer need not wait for the predecessor.
        if (threadIdx.x == T::threads)
            produce_weights<T, tf32>(p, reinterpret_cast<uint4*>(base), full, empty, n0, first_chunk, steps);
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
    // (An array of the two buffers' addresses, indexed at run time, went to local memory.)
    auto tf32_rows = [&](int b) { return reinterpret_cast<float*>(base + L::tf32_buffer_offset(cap, b)); };
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
    tile_sync<T>();  // the sources are visible
    if constexpr (tf32)
        blk.template load_chunk<k_tf32_row_floats>(first_chunk, tf32_rows(0));
    else
        blk.template load_chunk<k_implicit_chunk>(first_chunk, blk.landing);
    cp_async::commit();

    // A chunk's rows are the only copies this thread has in flight: issued at its
    // predecessor's first tap (`taps` steps of products to land in), awaited at its own.
    float acc[T::mt][T::nt][4] = {};
    step_cursor<T> at{0, 0, first_chunk, 0};
    int buffer = 0;  // TF32: the landing buffer of this chunk's rows
    auto stage_chunk = [&](int s) {
        cp_async::wait_groups<0>();  // this thread's rows of the chunk have landed
        if constexpr (tf32) {
            if (s > 0) buffer ^= 1;
            blk.round_chunk_tf32(tf32_rows(buffer));
            tile_sync<T>();  // everyone's are rounded, and every warp is done with the other buffer
            if (s + taps < steps) {
                blk.template load_chunk<k_tf32_row_floats>(at.chunk + 1, tf32_rows(buffer ^ 1));
                cp_async::commit();
            }
        } else {
            tile_sync<T>();  // everyone's have, and every warp is done with the planes
            blk.split_chunk();
            tile_sync<T>();  // the planes are written and the landing rows read
            if (s + taps < steps) {
                blk.template load_chunk<k_implicit_chunk>(at.chunk + 1, blk.landing);
                cp_async::commit();
            }
        }
    };
    // A warp gives a stage back once its products have read it, one arrival a warp, not a
    // thread: 8, not 256 shared-memory atomics on one word a step. (Lane 0 as %laneid: as
    // threadIdx.x % 32 it made ptxas serialise the wgmma steps, C7515, and the call 9% slower
    // at B = 64.)
    const bool leader = lane_id() == 0;
    if constexpr (gemm_wgmma<T>) {
        // A step's products go out as two groups, one a 16-k half, each half's A fragments in
        // a set of registers of its own: a half's fragments are loaded and its products issued
        // while the group before runs (wgmma::wait<1>: only the group two before, which read
        // this set, must be done), so the tensor cores are not idle between steps while a warp
        // waits for its products, loads fragments and issues (an H200 at B = 64: the 7-tap convs
        // 1,602 -> 1,591 us, Nsight Compute; small, so that wait was not what bounds them). With
        // both halves in one group the fragments could not be loaded before the step before's
        // products were done, and a second set of a whole step's fragments took the 128-row
        // tiles past the 96 registers that two blocks an SM leave (ptxas serialised the
        // products, C7512). Step s gives back step s - 1's stage once its second half is done.
        std::uint32_t a_hi[2][4], a_lo[2][4];  // TF32: a half's two k8 fragments
        int previous = 0;  // the stage of step s - 1
        for (int s = 0; s < steps; previous = at.stage, ++s, at.advance(taps)) {
            if (at.tap == 0) stage_chunk(s);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                wgmma::wait<1>();  // the group two before, which read set h, is done
                if (h == 1) mbarrier::arrive_if(&empty[previous], s > 0 && leader);
                if constexpr (tf32) {
                    blk.load_a_tf32(tf32_rows(buffer), at.tap, 2 * h, rows[0], a_hi[h]);
                    blk.load_a_tf32(tf32_rows(buffer), at.tap, 2 * h + 1, rows[0], a_lo[h]);
                } else {
                    blk.load_a(at.tap, h, rows[0], a_hi[h], a_lo[h]);
                }
                if (h == 0) mbarrier::wait(&full[at.stage], at.phase);  // step s's weights have landed
                wgmma::fence();
                const uint4* w = blk.w_smem + at.stage * T::w_words;
                if constexpr (tf32)
                    wgmma_tf32_half<T>(w, h, a_hi[h], a_lo[h], acc);
                else
                    wgmma_bf16x3_half<T>(w, h, a_hi[h], a_lo[h], acc);
                wgmma::commit();
            }
        }
        wgmma::wait<0>();  // the last step's products
    } else {
        for (int s = 0; s < steps; ++s, at.advance(taps)) {
            if (at.tap == 0) stage_chunk(s);
            mbarrier::wait(&full[at.stage], at.phase);  // step s's weights have landed
            blk.multiply(at.stage, at.tap, rows, acc);
            __syncwarp();  // every lane has its fragments
            mbarrier::arrive_if(&empty[at.stage], leader);
        }
    }
    allow_successor();
    finish_tile<T, has_cluster_sum<T> ? split_sums::either : split_sums::workspace>(p, acc, smem, nullptr, M, m0, n0,
                                                                                    split);
}

}  // namespace megatts::voc

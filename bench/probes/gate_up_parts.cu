// gate_up_parts: the frame kernel's gate/up phase (the largest code-predictor product at 64 rows)
// as the kernel runs it (`matvec<1, true>` from bf16 rows times the norm's weight, the RMS from
// the producers' row sums, 16-row paired tiles, the SwiGLU epilogue into bf16), on a full grid
// with a grid barrier after each phase, and its parts alone with the same barrier: the rows'
// staging (the copies, the row sums' RMS), the MMAs of the block's tiles on rows already staged,
// the same with the partial sums' reduction across the warps, and the staging with the MMAs. The
// differences say what a phase at R rows spends where. Weights are zeros (an MMA's time does not
// depend on values); the first tile's weights are loaded before the barrier, as the kernel does.
// A measurement tool, not part of the product (bench/README.md):
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I. \
//     -o /tmp/gate_up_parts bench/probes/gate_up_parts.cu && /tmp/gate_up_parts
#include <cstdio>
#include <cuda_runtime.h>
#include "kernels/megakernel/grid_sync.cuh"
#include "kernels/megakernel/matvec.cuh"
#include "bench/probes/phase_timer.cuh"
using namespace megatts::mk;

constexpr int k_hidden = 1024, k_inter = 3072, k_rows_out = 2 * k_inter;

struct probe_args {
    const bf16* w;   // [6144, 1024] zeros
    const bf16* xs;  // [128, 1024] staged rows (x times the norm's weight)
    const float* row_ss;  // [128, k_row_ss_tiles] the producers' sums of squares
    bf16* act;       // [128, 3072] the SwiGLU output
    float* sink;     // written only if a value is impossible: keeps the work from being optimised away
    unsigned* counter;
    int R, iters;
};

enum config { whole, staging, mmas, mmas_reduce, staging_mmas, barrier_only };
constexpr const char* names[] = {"gate/up as the kernel runs it",     "staging alone (copies, RMS)",
                                 "MMAs alone (rows already staged)", "MMAs + reduction across warps",
                                 "staging + MMAs",                    "barrier alone"};

// The MMAs of the block's tiles (and, with Reduce, the reduction matvec does after them), on
// whatever rows s.act holds: matvec's loop without its staging and epilogue.
template <bool Reduce>
__device__ void block_tiles(matvec_smem& s, weight_frags& f, const probe_args& a, int rc) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int tiles = k_rows_out / 16, ntn = (rc + 7) / 8;
    for (int u = blockIdx.x; u < tiles; u += gridDim.x) {
        frag_c acc[1][8];
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[0][n] = {{0.f, 0.f, 0.f, 0.f}};
        if (ntn == 1)
            mma_slab<1, 1>(acc, f, s.act);
        else if (ntn <= 4)
            mma_slab<1, 4>(acc, f, s.act);
        else
            mma_slab<1, 8>(acc, f, s.act);
        if (u + static_cast<int>(gridDim.x) < tiles) load_frags<1>(f, a.w, k_hidden, u + gridDim.x, 0);
        if constexpr (Reduce) {
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                if (n >= ntn) break;
                const int row = warp * 32 + g, col = (n * 8 + 2 * t) ^ ((g & 3) << 3);
                *reinterpret_cast<float2*>(&s.red[row * k_row_chunk + col]) = make_float2(acc[0][n].v[0], acc[0][n].v[1]);
                *reinterpret_cast<float2*>(&s.red[(row + 8) * k_row_chunk + col]) =
                    make_float2(acc[0][n].v[2], acc[0][n].v[3]);
            }
            __syncthreads();
            for (int e = threadIdx.x; e < tile_elements(8, rc); e += blockDim.x) {
                int i, col;
                if (!tile_element(e, 8, rc, i, col)) continue;
                // Element i: gate row i and up row i + 8 of the 16-row tile, as matvec's PAIRED epilogue.
                float gate = 0.f, up = 0.f;
#pragma unroll
                for (int w2 = 0; w2 < k_warps; ++w2) {
                    gate += s.red[red_at(i, col) + w2 * 32 * k_row_chunk];
                    up += s.red[red_at(i + 8, col) + w2 * 32 * k_row_chunk];
                }
                if (gate == 1234.5f) a.sink[0] = up;
            }
            __syncthreads();
        } else {
#pragma unroll
            for (int n = 0; n < 8; ++n)
                if (acc[0][n].v[0] == 1234.5f) a.sink[0] = acc[0][n].v[1];
        }
    }
}

template <int C>
__global__ void __launch_bounds__(k_threads, 1) phase(probe_args a) {
    matvec_smem& s = probe_start();
    weight_frags f;
    const act_source post{nullptr, k_hidden, nullptr, 1e-6f, nullptr, k_hidden, a.xs, a.row_ss};
    const int rc = min(a.R, k_row_chunk);
    for (int it = 1; it <= a.iters; ++it) {
        megatts::arrive(a.counter);
        if constexpr (C != staging && C != barrier_only) preload<1>(f, a.w, k_rows_out, k_hidden);
        megatts::wait(a.counter, it);
        if constexpr (C == whole) {
            bf16* act = a.act;
            matvec<1, true>(s, f, true, a.w, k_rows_out, k_hidden, a.R, post, [&](int n, int r, float g, float u) {
                act[r * k_inter + n] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
            });
        }
        if constexpr (C == staging || C == staging_mmas) {
            // matvec's staging of one slab of bf16 rows without a map: copies out, the row sums'
            // RMS read while they fly, then the wait and the block barrier.
            post.fill(s, 0, rc, 0, post.norm_weights(0), false);
            post.prepare(s, 0, rc);
            megatts::cp_async::wait_all();
            __syncthreads();
        }
        if constexpr (C == mmas || C == staging_mmas) block_tiles<false>(s, f, a, rc);
        if constexpr (C == mmas_reduce) block_tiles<true>(s, f, a, rc);
    }
}

int main() {
    cudaDeviceProp prop;
    const int blocks = probe_blocks(prop);
    probe_args a{};
    bf16 *w, *xs;
    float* row_ss;
    cudaMalloc(&w, static_cast<long>(k_rows_out) * k_hidden * 2);
    cudaMemset(w, 0, static_cast<long>(k_rows_out) * k_hidden * 2);
    cudaMalloc(&xs, 128L * k_hidden * 2);
    cudaMemset(xs, 0, 128L * k_hidden * 2);
    cudaMalloc(&row_ss, 128L * k_row_ss_tiles * 4);
    cudaMemset(row_ss, 0, 128L * k_row_ss_tiles * 4);
    cudaMalloc(&a.act, 128L * k_inter * 2);
    cudaMalloc(&a.sink, 64);
    cudaMalloc(&a.counter, 4);
    a.w = w;
    a.xs = xs;
    a.row_ss = row_ss;
    a.iters = 400;
    probe_table(prop, blocks, names, a, [](auto c) { return phase<decltype(c)::value>; });
    return 0;
}

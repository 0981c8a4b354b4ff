// matvec_phase: the frame kernel's matrix phases alone, on a full grid with a grid barrier
// after each, at R activation rows, and the same phases with one thing taken away, so
// that a phase's time can be split into its parts: the o-projection (K 2048, bf16 rows,
// split K, x += v), without the split, with a plain store for the epilogue, at K 1024;
// the QKV product (32-row tiles, f32 rows RMS-normalised) and the same from bf16 rows;
// gate/up (paired tiles, SwiGLU epilogue); the down-projection (K 3072, split). Weights
// are zeros (an MMA's time does not depend on values); weight loads are preloaded before
// the barrier as the kernel does; row groups past 64 rows (matvec's ROW_GROUPS), as the frame
// kernel's launches of more than 64 talker rows. A measurement tool, not part of the product:
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I. \
//     -o /tmp/matvec_phase bench/probes/matvec_phase.cu && /tmp/matvec_phase
#include <cstdio>
#include <cuda_runtime.h>
#include "kernels/megakernel/grid_sync.cuh"
#include "kernels/megakernel/matvec.cuh"
#include "bench/probes/phase_timer.cuh"
using namespace megatts::mk;

struct probe_args {
    const bf16* w;       // 6144 x 3072 zeros: every product's weights
    const bf16* norm;    // 1024 ones
    float* x;            // [256, 1024]
    float* y;            // [256, 6144]
    bf16* xb;            // [256, 3072]
    unsigned* counter;
    int R, iters;
};

enum config { o_split, o_plain, o_store, o_k1024, qkv_f32norm, qkv_bf16, gate_up, down_split, barrier_only };
constexpr const char* names[] = {"o-proj (K 2048, split, x += v)", "o-proj without split", "o-proj split, epilogue a store",
                                 "o-proj at K 1024 (one slab, no split)", "qkv (32-row tiles, f32 rows + norm)",
                                 "qkv from bf16 rows", "gate/up (paired, SwiGLU)", "down (K 3072, split, x += v)",
                                 "barrier alone"};

template <int C>
__global__ void __launch_bounds__(k_threads, 1) phase(probe_args a) {
    matvec_smem& s = probe_start();
    weight_frags f;
    float* x = a.x;
    float* y = a.y;
    bf16* xb = a.xb;
    for (int it = 1; it <= a.iters; ++it) {
        megatts::arrive(a.counter);
        if constexpr (C == o_split || C == o_store) preload<1>(f, a.w, 1024, 2048, true);
        if constexpr (C == o_plain) preload<1>(f, a.w, 1024, 2048, false);
        if constexpr (C == o_k1024) preload<1>(f, a.w, 1024, 1024, true);
        if constexpr (C == qkv_f32norm || C == qkv_bf16) preload<2>(f, a.w, 4096, 1024);
        if constexpr (C == gate_up) preload<2>(f, a.w, 6144, 1024);
        if constexpr (C == down_split) preload<1>(f, a.w, 1024, 3072, true);
        megatts::wait(a.counter, it);
        const act_source b2048{nullptr, 2048, nullptr, 1e-6f, nullptr, 2048, xb};
        const act_source b1024{nullptr, 1024, nullptr, 1e-6f, nullptr, 1024, xb};
        const act_source b3072{nullptr, 3072, nullptr, 1e-6f, nullptr, 3072, xb};
        const act_source normed{x, 1024, a.norm, 1e-6f, nullptr, 1024};
        auto add = [&](int n, int r, float v) { x[r * 1024 + n] += v; };
        auto store = [&](int n, int r, float v) { y[r * 6144 + n] = v; };
        if constexpr (C == o_split) matvec<1, false, true>(s, f, true, a.w, 1024, 2048, a.R, b2048, add, true);
        if constexpr (C == o_plain) matvec<1, false, true>(s, f, true, a.w, 1024, 2048, a.R, b2048, add);
        if constexpr (C == o_store) matvec<1, false, true>(s, f, true, a.w, 1024, 2048, a.R, b2048, store, true);
        if constexpr (C == o_k1024) matvec<1, false, true>(s, f, true, a.w, 1024, 1024, a.R, b1024, add, true);
        if constexpr (C == qkv_f32norm) matvec<2, false, true>(s, f, true, a.w, 4096, 1024, a.R, normed, store);
        if constexpr (C == qkv_bf16) matvec<2, false, true>(s, f, true, a.w, 4096, 1024, a.R, b1024, store);
        if constexpr (C == gate_up)
            matvec<2, true, true>(s, f, true, a.w, 6144, 1024, a.R, normed, [&](int n, int r, float g, float u) {
                xb[r * 3072 + n] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
            });
        if constexpr (C == down_split) matvec<1, false, true>(s, f, true, a.w, 1024, 3072, a.R, b3072, add, true);
    }
}

int main() {
    cudaDeviceProp prop;
    const int blocks = probe_blocks(prop);
    probe_args a{};
    bf16* w;
    bf16* norm;
    cudaMalloc(&w, 6144L * 3072 * 2);
    cudaMemset(w, 0, 6144L * 3072 * 2);
    cudaMalloc(&norm, 1024 * 2);
    cudaMemset(norm, 0, 1024 * 2);
    cudaMalloc(&a.x, 256 * 1024 * 4);
    cudaMemset(a.x, 0, 256 * 1024 * 4);
    cudaMalloc(&a.y, 256L * 6144 * 4);
    cudaMalloc(&a.xb, 256L * 3072 * 2);
    cudaMemset(a.xb, 0, 256L * 3072 * 2);
    cudaMalloc(&a.counter, 4);
    a.w = w;
    a.norm = norm;
    a.iters = 200;
    probe_table(prop, blocks, names, a, [](auto c) { return phase<decltype(c)::value>; },
                {1, 16, 64, 96, 128, 192, 256});
    return 0;
}

// phase_timer: times a probe kernel whose blocks run `iters` phases with a grid barrier after
// each (matvec_phase.cu, gate_up_parts.cu), launched as the frame kernel is: one block of
// k_threads per SM in clusters of k_split_cluster, a matvec_smem of dynamic shared memory.
//
// Contract: probe_start() (device, whole block) begins each probe kernel. Host: probe_blocks()
// gives the grid and fills the device's properties; best_launch_ms() times three launches of a
// kernel with Args that hold `unsigned* counter` (the barrier's, zeroed here before each launch)
// and returns the best in ms, or -1 if a launch failed; best_us_per_phase() (Args also with
// `int iters`) the same in us per phase, with a matvec_smem of shared memory; probe_table() times configs 0 ..
// N - 1 (kernel_of(std::integral_constant<int, C>) is config C's kernel) at the numbers of
// activation rows (Args has `int R`; 1, 8, 16 and 64 unless told) and prints them as a table.
// A measurement tool's helper, not part of the product (bench/README.md).
#pragma once

#include <cstdio>
#include <initializer_list>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/megakernel/matvec.cuh"

// A probe kernel's start, as the frame kernel's: its dynamic shared memory as matvec's, and the
// cluster barrier before split K's first write to the other block of the cluster.
__device__ __forceinline__ megatts::mk::matvec_smem& probe_start() {
    extern __shared__ __align__(16) unsigned char raw[];
    megatts::mk::split_k_start();
    return *reinterpret_cast<megatts::mk::matvec_smem*>(raw);
}

// The frame kernel's grid on this GPU: one block per SM, a whole number of clusters.
inline int probe_blocks(cudaDeviceProp& prop) {
    cudaGetDeviceProperties(&prop, 0);
    return prop.multiProcessorCount / megatts::mk::k_split_cluster * megatts::mk::k_split_cluster;
}

// The best of three launches of `kernel` in ms (or -1 if a launch failed), as the frame kernel
// launches: `blocks` blocks of k_threads in clusters of k_split_cluster, `smem` bytes of dynamic
// shared memory, the barrier's counter (Args has `unsigned* counter`) zeroed before each.
template <class Args>
float best_launch_ms(void (*kernel)(Args), Args a, int blocks, int smem) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    float best = 1e30f;
    for (int rep = 0; rep < 3; ++rep) {
        cudaMemset(a.counter, 0, 4);
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaEventRecord(e0);
        // In clusters, as the frame kernel runs: a split tile's two blocks are a cluster.
        cudaLaunchAttribute cluster;
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim = {megatts::mk::k_split_cluster, 1, 1};
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(megatts::mk::k_threads);
        cfg.dynamicSmemBytes = smem;
        cfg.attrs = &cluster;
        cfg.numAttrs = 1;
        cudaLaunchKernelEx(&cfg, kernel, a);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
            std::printf("launch failed: %s\n", cudaGetErrorString(e));
            return -1.f;
        }
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        if (ms < best) best = ms;
    }
    return best;
}

template <class Args>
float best_us_per_phase(void (*kernel)(Args), Args a, int blocks) {
    const float ms = best_launch_ms(kernel, a, blocks, sizeof(megatts::mk::matvec_smem));
    return ms < 0 ? -1.f : ms * 1000.f / a.iters;
}

template <int N, class Args, class KernelOf>
void probe_table(const cudaDeviceProp& prop, int blocks, const char* const (&names)[N], Args a,
                 const KernelOf& kernel_of, std::initializer_list<int> rows = {1, 8, 16, 64}) {
    const int n = static_cast<int>(rows.size());
    std::vector<float> t(static_cast<std::size_t>(N) * n);  // [config][rows]
    for (int i = 0; i < n; ++i) {
        a.R = rows.begin()[i];
        [&]<int... C>(std::integer_sequence<int, C...>) {
            ((t[C * n + i] = best_us_per_phase(kernel_of(std::integral_constant<int, C>{}), a, blocks)), ...);
        }(std::make_integer_sequence<int, N>{});
    }
    std::printf("%s, %d blocks; us per phase (barrier included)\n", prop.name, blocks);
    std::printf("%-44s", "phase");
    for (int i = 0; i < n; ++i) std::printf(" %5s%-3d", "R=", rows.begin()[i]);
    std::printf("\n");
    for (int c = 0; c < N; ++c) {
        std::printf("%-44s", names[c]);
        for (int i = 0; i < n; ++i) std::printf(" %8.2f", t[c * n + i]);
        std::printf("\n");
    }
}

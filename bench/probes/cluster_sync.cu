// cluster_sync: what a phase kept inside a thread-block cluster would cost on this GPU, for
// cluster sizes 1 to 16, with one block of 256 threads per SM as the frame kernel runs: how many
// such clusters can be resident at once (the grid a persistent kernel could launch), the time of
// one cluster barrier (barrier.cluster arrive.release + wait.acquire), and of one exchange
// through distributed shared memory (each block stores 512 bytes into the next block's shared
// memory, a cluster barrier, each reads what it was given) against the same exchange through
// global memory and a grid barrier (the frame kernel's phase boundary). Each figure is the best
// of three launches of 2,000 rounds, timed by events, over 2,000. A measurement tool, not
// part of the product (bench/README.md):
//   nvcc -O3 -std=c++17 -arch=sm_90a -I. -o /tmp/cluster_sync bench/probes/cluster_sync.cu && /tmp/cluster_sync
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

#include "bench/probes/probe_check.cuh"

namespace cg = cooperative_groups;

constexpr int k_threads = 256;
constexpr int k_iters = 2000;
constexpr int k_words = 128;  // 512 bytes a block exchanges each iteration
// Enough dynamic shared memory that only one block fits an SM, as with the frame kernel.
constexpr int k_smem = 160 * 1024;

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The frame kernel's grid barrier: one release add per block, every block polls for the total.
__device__ __forceinline__ void grid_barrier(unsigned* counter, unsigned target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
        while (ld_acquire(counter) < target) __nanosleep(32);
    }
    __syncthreads();
}

// Mode 0: cluster barriers alone. 1: exchange through distributed shared memory. 2: the same
// exchange through global memory with a grid barrier. `sink` keeps the exchanged values live.
__global__ void probe(int mode, unsigned* counter, float* global_rows, float* sink) {
    extern __shared__ float smem[];
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    float* next = cluster.map_shared_rank(smem, (rank + 1) % size);
    float acc = 0.f;
    cluster.sync();
    for (int i = 0; i < k_iters; ++i) {
        if (mode == 0) {
            cluster.sync();
        } else if (mode == 1) {
            if (threadIdx.x < k_words) next[(i & 1) * k_words + threadIdx.x] = static_cast<float>(i + threadIdx.x);
            cluster.sync();
            if (threadIdx.x < k_words) acc += smem[(i & 1) * k_words + threadIdx.x];
        } else {
            const int to = (blockIdx.x + 1) % gridDim.x;
            if (threadIdx.x < k_words)
                global_rows[(static_cast<long>(i & 1) * gridDim.x + to) * k_words + threadIdx.x] =
                    static_cast<float>(i + threadIdx.x);
            grid_barrier(counter, (i + 1) * gridDim.x);
            if (threadIdx.x < k_words)
                acc += __ldcg(global_rows + (static_cast<long>(i & 1) * gridDim.x + blockIdx.x) * k_words + threadIdx.x);
        }
    }
    cluster.sync();  // no block leaves while another may still write its shared memory
    if (acc == -1.f) *sink = acc;
}

int main() {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("%s, %d SMs, %d threads a block, %d KB dynamic shared memory\n", prop.name, sms, k_threads,
                k_smem / 1024);
    CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, k_smem));
    CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    unsigned* counter;
    float *rows, *sink;
    cudaEvent_t begin, end;
    CHECK(cudaEventCreate(&begin));
    CHECK(cudaEventCreate(&end));
    CHECK(cudaMalloc(&counter, sizeof(unsigned)));
    CHECK(cudaMalloc(&rows, 2L * sms * k_words * sizeof(float)));
    CHECK(cudaMalloc(&sink, sizeof(float)));
    std::printf("%7s %9s %7s %16s %16s %18s\n", "cluster", "clusters", "blocks", "cluster sync ns",
                "DSMEM swap ns", "global + grid ns");
    for (int c : {1, 2, 4, 8, 16}) {
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim = {static_cast<unsigned>(c), 1, 1};
        cudaLaunchConfig_t cfg{};
        cfg.blockDim = dim3(k_threads);
        cfg.dynamicSmemBytes = k_smem;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        cfg.gridDim = dim3(c);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, probe, &cfg) != cudaSuccess || clusters < 1) {
            cudaGetLastError();
            std::printf("%7d %9s\n", c, "does not fit");
            continue;
        }
        const int blocks = clusters * c;
        cfg.gridDim = dim3(blocks);
        double ns[3];
        for (int mode = 0; mode < 3; ++mode) {
            float best = -1.f;
            for (int run = 0; run < 3; ++run) {
                CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
                CHECK(cudaEventRecord(begin));
                CHECK(cudaLaunchKernelEx(&cfg, probe, mode, counter, rows, sink));
                CHECK(cudaEventRecord(end));
                CHECK(cudaEventSynchronize(end));
                float ms = 0.f;
                CHECK(cudaEventElapsedTime(&ms, begin, end));
                if (best < 0.f || ms < best) best = ms;
            }
            ns[mode] = best * 1e6 / k_iters;
        }
        std::printf("%7d %9d %7d %16.0f %16.0f %18.0f\n", c, clusters, blocks, ns[0], ns[1], ns[2]);
    }
    return 0;
}

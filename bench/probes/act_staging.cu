// act_staging: what it costs every block of a full grid to stage the same activation rows
// into shared memory between two grid barriers, as each matrix phase of the frame kernel
// does at a large batch (64 rows of one 1024-wide slab: 128 KB as bf16, 256 KB as f32),
// by way of staging: cp.async 16-byte copies in the kernel's order, the same with each
// block starting at another row, each block reading rows of its own (no sharing: the L2's
// rate without hot lines), one bulk copy per row (cp.async.bulk into an mbarrier), and bulk
// copies multicast to a cluster of 2 or 4 blocks (each block reads 1/C of the rows once
// for all C). A measurement tool, not part of the product (bench/README.md):
//   nvcc -std=c++20 -O3 -arch=sm_90a -o /tmp/act_staging bench/probes/act_staging.cu && /tmp/act_staging
#include <cstdio>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int k_threads = 256;
constexpr int k_rows = 64;
constexpr int k_slab = 1024;
constexpr int k_stride_bf16 = k_slab + 8;  // elements, as the kernel's k_slab_stride
constexpr int k_stage_rows = 16;

__device__ __forceinline__ void copy16(void* smem, const void* src) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

__device__ __forceinline__ void grid_barrier(unsigned* counter, unsigned phase) {
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
        const unsigned target = phase * gridDim.x;
        unsigned v;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
        } while (v < target);
    }
    __syncthreads();
}

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile(
        "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}" ::"r"(a),
        "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_copy(void* smem, const void* src, unsigned bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(src), "r"(bytes), "r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
}
__device__ __forceinline__ void bulk_multicast(void* smem, const void* src, unsigned bytes, unsigned long long* bar,
                                               unsigned short mask) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(
            (unsigned)__cvta_generic_to_shared(smem)),
        "l"(src), "r"(bytes), "r"((unsigned)__cvta_generic_to_shared(bar)), "h"(mask)
        : "memory");
}

// V: 0 cp.async bf16 in order, 1 rotated by block, 2 distinct rows per block, 3 bulk per row,
// 4 bulk multicast over the cluster (C from the launch), 5 f32 in 16-row stages in order,
// 6 f32 rotated, 7 nothing (the barrier alone).
template <int V>
__global__ void __launch_bounds__(k_threads, 1) stage(const unsigned short* bf, const float* f32, unsigned* counter,
                                                      int iters, float* sink) {
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned short* act = reinterpret_cast<unsigned short*>(smem);
    float* stage_f = reinterpret_cast<float*>(smem + k_rows * k_stride_bf16 * 2);
    __shared__ unsigned long long bar;
    const int t = threadIdx.x;
    unsigned cluster_rank = 0, cluster_size = 1;
    if constexpr (V == 4) {
        cg::cluster_group cl = cg::this_cluster();
        cluster_rank = cl.block_rank();
        cluster_size = cl.num_blocks();
    }
    if (t == 0) mbar_init(&bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if constexpr (V == 4) cg::this_cluster().sync();
    __syncthreads();
    float acc = 0.f;
    for (int it = 0; it < iters; ++it) {
        grid_barrier(counter, 2 * it + 1);
        if constexpr (V <= 2) {
            const int per_row = k_slab / 8, k = (t % per_row) * 8;
            const int rot = V == 1 ? blockIdx.x % k_rows : 0;
            const unsigned short* src = bf + (V == 2 ? static_cast<long>(blockIdx.x) * k_rows * k_slab : 0);
#pragma unroll 4
            for (int r = t / per_row; r < k_rows; r += k_threads / per_row) {
                const int rr = (r + rot) % k_rows;
                copy16(&act[rr * k_stride_bf16 + k], src + static_cast<long>(rr) * k_slab + k);
            }
            wait_all();
        } else if constexpr (V == 3) {
            if (t == 0) mbar_expect(&bar, k_rows * k_slab * 2);
            __syncthreads();
            if (t < k_rows) bulk_copy(&act[t * k_stride_bf16], bf + static_cast<long>(t) * k_slab, k_slab * 2, &bar);
            mbar_wait(&bar, it & 1);
        } else if constexpr (V == 4) {
            if (t == 0) mbar_expect(&bar, k_rows * k_slab * 2);
            // every block of the cluster must have armed its barrier before any copy lands in it
            cg::this_cluster().sync();
            const int per = k_rows / cluster_size;
            if (t < per) {
                const int r = cluster_rank * per + t;
                bulk_multicast(&act[r * k_stride_bf16], bf + static_cast<long>(r) * k_slab, k_slab * 2, &bar,
                               static_cast<unsigned short>((1u << cluster_size) - 1));
            }
            mbar_wait(&bar, it & 1);
        } else if constexpr (V == 5 || V == 6) {
            const int k = 4 * t;
            const int rot = V == 6 ? (blockIdx.x % (k_rows / k_stage_rows)) * k_stage_rows : 0;
            for (int b0 = 0; b0 < k_rows; b0 += k_stage_rows) {
                const int b = (b0 + rot) % k_rows;
#pragma unroll 4
                for (int r = 0; r < k_stage_rows; ++r)
                    copy16(&stage_f[r * k_slab + k], f32 + static_cast<long>(b + r) * k_slab + k);
                wait_all();
                for (int u = 0; u < k_stage_rows; ++u) {
                    const float4 v = *reinterpret_cast<const float4*>(&stage_f[u * k_slab + k]);
                    act[(b + u) * k_stride_bf16 + k] = __float_as_uint(v.x) >> 16;
                    act[(b + u) * k_stride_bf16 + k + 1] = __float_as_uint(v.y) >> 16;
                }
            }
        }
        __syncthreads();
        acc += act[(t * 37) % (k_rows * k_slab)];
        grid_barrier(counter, 2 * it + 2);
    }
    if constexpr (V == 4) cg::this_cluster().sync();
    if (acc == 12345.f) *sink = acc;
}

template <int V>
float run(int cluster, const unsigned short* bf, const float* f32, unsigned* counter, float* sink, int blocks) {
    const int smem = k_rows * k_stride_bf16 * 2 + k_stage_rows * k_slab * 4;
    cudaFuncSetAttribute(stage<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (cluster > 1) cudaFuncSetAttribute(stage<V>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(k_threads);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cluster > 1) {
        int clusters = 0;
        cudaOccupancyMaxActiveClusters(&clusters, stage<V>, &cfg);
        if (clusters * cluster < blocks) {
            std::printf("  cluster %d: only %d clusters co-resident\n", cluster, clusters);
            return -1.f;
        }
    }
    const int iters = 200;
    float best = 1e30f;
    for (int rep = 0; rep < 3; ++rep) {
        cudaMemset(counter, 0, 4);
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cudaEventRecord(a);
        cudaError_t e = cudaLaunchKernelEx(&cfg, stage<V>, bf, f32, counter, iters, sink);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
            std::printf("  launch failed: %s\n", cudaGetErrorString(e));
            return -1.f;
        }
        float ms = 0.f;
        cudaEventElapsedTime(&ms, a, b);
        best = ms * 1000.f / iters < best ? ms * 1000.f / iters : best;
    }
    return best;
}

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const int blocks = prop.multiProcessorCount;
    unsigned short* bf;
    float* f32;
    unsigned* counter;
    float* sink;
    cudaMalloc(&bf, static_cast<size_t>(blocks) * k_rows * k_slab * 2);
    cudaMalloc(&f32, k_rows * k_slab * 4);
    cudaMalloc(&counter, 4);
    cudaMalloc(&sink, 4);
    cudaMemset(bf, 0, static_cast<size_t>(blocks) * k_rows * k_slab * 2);
    cudaMemset(f32, 0, k_rows * k_slab * 4);
    std::printf("%s, %d blocks of %d threads; us per iteration (two grid barriers + staging)\n", prop.name, blocks,
                k_threads);
    const float none = run<7>(1, bf, f32, counter, sink, blocks);
    std::printf("barriers alone                          %7.2f\n", none);
    auto show = [&](const char* what, float us) {
        std::printf("%-40s %7.2f   staging %6.2f us\n", what, us, us - none);
    };
    show("bf16 128 KB cp.async, same order", run<0>(1, bf, f32, counter, sink, blocks));
    show("bf16 128 KB cp.async, rotated rows", run<1>(1, bf, f32, counter, sink, blocks));
    show("bf16 128 KB cp.async, own rows (no share)", run<2>(1, bf, f32, counter, sink, blocks));
    show("bf16 128 KB bulk per row", run<3>(1, bf, f32, counter, sink, blocks));
    show("bf16 128 KB bulk multicast, cluster 2", run<4>(2, bf, f32, counter, sink, blocks));
    show("bf16 128 KB bulk multicast, cluster 4", run<4>(4, bf, f32, counter, sink, blocks));
    show("f32 256 KB in 16-row stages, same order", run<5>(1, bf, f32, counter, sink, blocks));
    show("f32 256 KB in 16-row stages, rotated", run<6>(1, bf, f32, counter, sink, blocks));
    show("bf16 128 KB cp.async, same order (again)", run<0>(1, bf, f32, counter, sink, blocks));
    return 0;
}

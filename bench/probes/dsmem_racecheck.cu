// dsmem_racecheck: whether compute-sanitizer's racecheck handles reads of other blocks' shared
// memory within a thread-block cluster, the way the vocoder's split K adds its partial tiles
// (kernels/vocoder/conv_gemm.cuh): each block fills its dynamic shared memory, a cluster barrier,
// each reads a share of every block's words (through generic pointers from
// cooperative_groups' map_shared_rank, or as mapa + ld.shared::cluster) and writes the sums over
// its own, a second barrier before any block leaves. One launch of 132 clusters, checked against
// the sums on the host; "racy" drops the first barrier, so that racecheck has a hazard to find;
// "vec4", "exited" and "async" are the generic reads 16 bytes at a time, with a warp gone, and
// after words that landed by cp.async (below).
// The clusters span x (a 1-D grid), or z as the vocoder's split K launches them (a grid of
// 2 x 66 tiles x the cluster size in splits, clusters of 1 x 1 x size). As in the vocoder's
// kernels, the block has static shared memory too (the dynamic words start after it), and
// KB sets the dynamic shared memory a block asks for (default 16; the words are its first 16).
// A question about the tool, not part of the product (bench/README.md):
//   nvcc -O3 -std=c++17 -arch=sm_90a -I. -o /tmp/dsmem_racecheck bench/probes/dsmem_racecheck.cu
//   compute-sanitizer --tool racecheck /tmp/dsmem_racecheck generic|ptx|vec4|exited|async|racy CLUSTER_SIZE x|z [KB]
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#include "bench/probes/probe_check.cuh"

namespace cg = cooperative_groups;

constexpr int k_threads = 256;
constexpr int k_words = 4096;  // 16 KB of each block's shared memory
constexpr int k_clusters = 132;

enum class mode { generic, ptx, vec4, exited, async, racy };

__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }

__device__ __forceinline__ float load_remote(const float* local, unsigned rank) {
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local)), remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}

template <mode M>
__global__ void add_shares(float* out, const float* source, bool z) {
    extern __shared__ float words[];
    __shared__ float tag[k_threads];  // static shared memory before the dynamic
    // "exited": the last warp leaves at once, as conv_implicit's producer warp leaves before the
    // cluster barriers (which then wait for the threads that have not exited).
    constexpr int active = M == mode::exited ? k_threads - 32 : k_threads;
    if (threadIdx.x >= active) return;
    tag[threadIdx.x] = static_cast<float>(threadIdx.x);
    const cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    // The cluster's index among the launch's, whichever axis the clusters span.
    const long cluster_id = z ? blockIdx.y * gridDim.x + blockIdx.x : blockIdx.x / size;
    const long block = cluster_id * size + rank;
    if constexpr (M == mode::async) {
        // "async": the words land by cp.async from global memory, as conv_gemm's tiles do.
        for (int i = 4 * threadIdx.x; i < k_words; i += 4 * active) {
            const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&words[i]));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(source + block * k_words + i) : "memory");
        }
        asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    } else {
        for (int i = threadIdx.x; i < k_words; i += active) words[i] = static_cast<float>((block * 7 + i) % 1000);
    }
    if constexpr (M != mode::racy) {
        cluster_arrive();
        cluster_wait();
    }
    // "vec4": 16-byte reads, as the vocoder's float4 partial tiles; else 4-byte ones.
    constexpr int width = M == mode::vec4 ? 4 : 1;
    const int units = k_words / width, share = (units + size - 1) / size,
              u0 = min(units, static_cast<int>(rank) * share), u1 = min(units, u0 + share);
    for (int u = u0 + threadIdx.x; u < u1; u += active) {
        if constexpr (M == mode::vec4) {
            float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
            for (unsigned r = 0; r < size; ++r) {
                const float4 v = *reinterpret_cast<const float4*>(cluster.map_shared_rank(&words[4 * u], r));
                sum.x += v.x;
                sum.y += v.y;
                sum.z += v.z;
                sum.w += v.w;
            }
            *reinterpret_cast<float4*>(&words[4 * u]) = sum;
        } else {
            float sum = 0.f;
            for (unsigned r = 0; r < size; ++r)
                sum += M == mode::ptx ? load_remote(&words[u], r) : *cluster.map_shared_rank(&words[u], r);
            words[u] = sum;
        }
    }
    cluster_arrive();
    asm volatile("bar.sync 1, %0;" ::"n"(active) : "memory");
    for (int i = u0 * width + threadIdx.x; i < u1 * width; i += active)
        out[cluster_id * k_words + i] = words[i] + tag[threadIdx.x] * 0.f;
    cluster_wait();
}

template <mode M>
int run(int size, bool z, int kb) {
    float* out;
    const int blocks = k_clusters * size;
    CHECK(cudaMalloc(&out, sizeof(float) * k_clusters * k_words));
    std::vector<float> words(static_cast<size_t>(blocks) * k_words);
    for (long b = 0; b < blocks; ++b)
        for (int i = 0; i < k_words; ++i) words[static_cast<size_t>(b) * k_words + i] = static_cast<float>((b * 7 + i) % 1000);
    float* source;
    CHECK(cudaMalloc(&source, sizeof(float) * words.size()));
    CHECK(cudaMemcpy(source, words.data(), sizeof(float) * words.size(), cudaMemcpyHostToDevice));
    CHECK(cudaFuncSetAttribute(add_shares<M>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncSetAttribute(add_shares<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, kb * 1024));
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    const unsigned n = static_cast<unsigned>(size);
    attribute.val.clusterDim.x = z ? 1 : n;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = z ? n : 1;
    static_assert(k_clusters == 2 * 66);
    config.gridDim = z ? dim3(2, 66, n) : dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(k_threads);
    config.dynamicSmemBytes = static_cast<size_t>(kb) * 1024;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, add_shares<M>, out, static_cast<const float*>(source), z));
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(static_cast<size_t>(k_clusters) * k_words);
    CHECK(cudaMemcpy(got.data(), out, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    long wrong = 0;
    for (int c = 0; c < k_clusters; ++c)
        for (int i = 0; i < k_words; ++i) {
            float want = 0.f;
            for (int r = 0; r < size; ++r) want += static_cast<float>((static_cast<long>(c * size + r) * 7 + i) % 1000);
            wrong += got[static_cast<size_t>(c) * k_words + i] != want;
        }
    std::printf("%d clusters of %d blocks along %c, %d KB: %ld of %d sums wrong\n", k_clusters, size, z ? 'z' : 'x', kb, wrong, k_clusters * k_words);
    CHECK(cudaFree(out));
    CHECK(cudaFree(source));
    return wrong == 0 ? 0 : 2;
}

int main(int argc, char** argv) {
    const char* how = argc > 1 ? argv[1] : "generic";
    const int size = argc > 2 ? std::atoi(argv[2]) : 4;
    const bool z = argc > 3 && !std::strcmp(argv[3], "z");
    const int kb = argc > 4 ? std::atoi(argv[4]) : 16;
    if (kb < 16 || kb > 200) {
        std::printf("%d KB of dynamic shared memory: 16 to 200\n", kb);
        return 1;
    }
    if (size < 1 || size > 16) {
        std::printf("cluster size %d: 1 to 16\n", size);
        return 1;
    }
    if (!std::strcmp(how, "generic")) return run<mode::generic>(size, z, kb);
    if (!std::strcmp(how, "ptx")) return run<mode::ptx>(size, z, kb);
    if (!std::strcmp(how, "vec4")) return run<mode::vec4>(size, z, kb);
    if (!std::strcmp(how, "exited")) return run<mode::exited>(size, z, kb);
    if (!std::strcmp(how, "async")) return run<mode::async>(size, z, kb);
    if (!std::strcmp(how, "racy")) return run<mode::racy>(size, z, kb);
    std::printf("mode %s: generic, ptx, vec4, exited, async or racy\n", how);
    return 1;
}

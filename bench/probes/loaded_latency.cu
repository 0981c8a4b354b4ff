// loaded_latency: how long one dependent L2 hit takes while every SM streams weights from HBM,
// against the same GPU idle. A frame's phase is a chain of L2 round trips (staging the
// activation rows, the barrier's release and poll); layer_streaming.cu found that streaming the
// next phases' weights at full rate hardly overlaps that chain. Here one thread of each of the
// grid's blocks (one a SM) chases pointers through 64 KB that stay in the L2 (`ld.global.cg`:
// every load an L2 hit, each address from the load before), while the block's other warps
// either idle, stream a 1 GiB buffer by bulk copies into a shared-memory ring (one thread, 8
// slots of 16 KB, as a weight loader would), or by 16-byte loads from every thread (four in
// flight each). Prints the chase's mean latency and the streams' bandwidth. A measurement tool,
// not part of the product:
// The bulk-copy stream runs with 1, 2, 4 and 8 slots in flight: the bytes a block keeps in
// flight against the hit's latency.
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I. \
//     -o /tmp/loaded_latency bench/probes/loaded_latency.cu && /tmp/loaded_latency
#include <cstdio>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/common/mbarrier.cuh"

namespace {

constexpr int k_threads = 256, k_chase = 2000, k_lines = 512;  // 512 lines of 128 bytes: 64 KB
constexpr int k_slots = 8, k_slot_bytes = 16 * 1024;
constexpr long k_stream_bytes = 1L << 30;

enum mode { idle, bulk, loads };

struct probe_args {
    const unsigned* chain;  // [k_lines * 32]: word 0 of each line holds the next line's word index
    const uint4* stream;    // k_stream_bytes
    unsigned long long* latency_ns;  // [blocks]: the chase's mean, ns a load
    unsigned long long* streamed;    // [blocks]: bytes the block streamed
    unsigned long long* stream_ns;   // [blocks]: over this span
    int mode;
    int slots;                       // bulk: copies in flight, a power of two up to k_slots
};

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ unsigned chase(const unsigned* chain, unsigned at, int n) {
    for (int i = 0; i < n; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(at) : "l"(chain + at) : "memory");
    return at;
}

__global__ void __launch_bounds__(k_threads, 1) probe(probe_args a) {
    extern __shared__ __align__(128) unsigned char ring_raw[];  // [k_slots][k_slot_bytes]
    auto ring = reinterpret_cast<unsigned char(*)[k_slot_bytes]>(ring_raw);
    __shared__ std::uint64_t full[k_slots];
    __shared__ volatile int done;
    if (threadIdx.x == 0) {
        done = 0;
        for (int i = 0; i < k_slots; ++i) megatts::mbarrier::init(&full[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const long chunks = k_stream_bytes / k_slot_bytes;
    unsigned long long bytes = 0;
    if (threadIdx.x == 0) {
        unsigned at = chase(a.chain, (blockIdx.x * 37 % k_lines) * 32, k_chase);  // warm: the lines into the L2
        const unsigned long long t0 = now_ns();
        at = chase(a.chain, at, k_chase);
        const unsigned long long t1 = now_ns();
        a.latency_ns[blockIdx.x] = (t1 - t0) / k_chase + (at == 0xffffffffu);  // `at` kept live
        done = 1;
    }
    const unsigned long long start = now_ns();
    if (a.mode == bulk && threadIdx.x == 32) {
        const int shift = __ffs(a.slots) - 1;  // slots = 1 << shift
        long issued = 0;
        for (; !done; ++issued) {
            const int slot = issued & (a.slots - 1);
            if (issued >= a.slots) megatts::mbarrier::wait(&full[slot], ((issued >> shift) - 1) & 1);
            const long chunk = (issued * gridDim.x + blockIdx.x) % chunks;
            megatts::mbarrier::arrive_expect_tx(&full[slot], k_slot_bytes);
            megatts::mbarrier::bulk_copy(ring[slot], reinterpret_cast<const char*>(a.stream) + chunk * k_slot_bytes,
                                         k_slot_bytes, &full[slot]);
        }
        for (long i = issued - a.slots > 0 ? issued - a.slots : 0; i < issued; ++i)  // drain
            megatts::mbarrier::wait(&full[i & (a.slots - 1)], (i >> shift) & 1);
        bytes = issued * k_slot_bytes;
    } else if (a.mode == loads && threadIdx.x >= 32) {
        const long n16 = k_stream_bytes / 16, step = static_cast<long>(gridDim.x) * (k_threads - 32);
        unsigned x = 0;
        long i = blockIdx.x * static_cast<long>(k_threads - 32) + threadIdx.x - 32;
        for (; !done; i = (i + 4 * step) % n16) {
            uint4 v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u)
                asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                             : "l"(a.stream + (i + u * step) % n16));
#pragma unroll
            for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].w;
            bytes += 64;
        }
        if (x == 0x12345678u) bytes += 1;  // the loads' values kept live
    }
    // Per block: the stream's bytes over its own span (it runs through the warm-up chase too).
    const unsigned long long end = now_ns();
    if (bytes) atomicAdd(&a.streamed[blockIdx.x], bytes);
    if (threadIdx.x == 32) a.stream_ns[blockIdx.x] = end - start;
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const int blocks = prop.multiProcessorCount;
    // Line i's word 0 names line (i * 193 + 1) % k_lines: one cycle through all 512 lines.
    std::vector<unsigned> chain(k_lines * 32, 0);
    for (int i = 0; i < k_lines; ++i) chain[i * 32] = ((i * 193 + 1) % k_lines) * 32;
    probe_args a{};
    unsigned* d_chain;
    uint4* d_stream;
    cudaMalloc(&d_chain, chain.size() * 4);
    cudaMemcpy(d_chain, chain.data(), chain.size() * 4, cudaMemcpyHostToDevice);
    cudaMalloc(&d_stream, k_stream_bytes);
    cudaMemset(d_stream, 1, k_stream_bytes);
    a.chain = d_chain;
    a.stream = d_stream;
    cudaMalloc(&a.latency_ns, blocks * 8);
    cudaMalloc(&a.streamed, blocks * 8);
    cudaMalloc(&a.stream_ns, blocks * 8);
    cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, k_slots * k_slot_bytes);
    std::printf("%s, %d blocks; a dependent L2 hit (ld.global.cg) while the blocks' other warps...\n", prop.name, blocks);
    struct run {
        int mode, slots;
        const char* name;
    };
    const run runs[] = {{idle, 1, "idle"},
                        {bulk, 1, "stream by bulk copies, 1 x 16 KB in flight"},
                        {bulk, 2, "stream by bulk copies, 2 x 16 KB in flight"},
                        {bulk, 4, "stream by bulk copies, 4 x 16 KB in flight"},
                        {bulk, 8, "stream by bulk copies, 8 x 16 KB in flight"},
                        {loads, 1, "stream by 16-byte loads, 4 a thread of 224"}};
    for (int rep = 0; rep < 2; ++rep)
        for (const run& r : runs) {
            a.mode = r.mode;
            a.slots = r.slots;
            cudaMemset(a.streamed, 0, blocks * 8);
            cudaMemset(a.stream_ns, 0, blocks * 8);
            probe<<<blocks, k_threads, k_slots * k_slot_bytes>>>(a);
            if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
                std::printf("launch failed: %s\n", cudaGetErrorString(e));
                return 1;
            }
            std::vector<unsigned long long> lat(blocks), bytes(blocks), ns(blocks);
            cudaMemcpy(lat.data(), a.latency_ns, blocks * 8, cudaMemcpyDeviceToHost);
            cudaMemcpy(bytes.data(), a.streamed, blocks * 8, cudaMemcpyDeviceToHost);
            cudaMemcpy(ns.data(), a.stream_ns, blocks * 8, cudaMemcpyDeviceToHost);
            double mean = 0, gb_s = 0;
            unsigned long long lo = ~0ull, hi = 0;
            for (int b = 0; b < blocks; ++b) {
                mean += lat[b] / double(blocks);
                if (ns[b]) gb_s += bytes[b] / double(ns[b]);
                lo = lat[b] < lo ? lat[b] : lo;
                hi = lat[b] > hi ? lat[b] : hi;
            }
            std::printf("  %-44s %6.0f ns a load (blocks %llu-%llu); streamed %.0f GB/s\n", r.name, mean, lo, hi, gb_s);
        }
    return 0;
}

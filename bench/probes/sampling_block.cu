// sampling_block: how long the frame kernel's sampler (sample_token, code-predictor shape:
// 2048 logits, top-k 50, temperature 0.9) takes in one block: alone, with the rest of a full
// grid idle or waiting at a grid barrier as in the frame kernel's sampling phases, after the
// grid has streamed 16-160 MB through L2 (normal or evict-first loads, as a code-predictor
// pass streams its weights), and after other code has evicted the instruction cache. A
// measurement tool, not part of the product:
//   nvcc -std=c++20 -O3 -arch=sm_90a --expt-relaxed-constexpr -I. -o /tmp/sampling_block \
//     bench/probes/sampling_block.cu && /tmp/sampling_block
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include "kernels/megakernel/sampling.cuh"
#include "kernels/megakernel/grid_sync.cuh"
using namespace megatts::mk;

template <int SLEEP>
__device__ __forceinline__ void wait_with(unsigned* counter, unsigned phase) {
    if (threadIdx.x == 0) {
        const unsigned target = phase * gridDim.x;
        while (megatts::load_acquire(counter) < target) if (SLEEP) __nanosleep(SLEEP);
    }
    __syncthreads();
}

// Straight-line code of about 16 bytes * N instructions: run once, it evicts the
// instruction caches.
template <int N>
__device__ __noinline__ float evict_icache(float x) {
#pragma unroll
    for (int i = 0; i < N; ++i) x = fmaf(x, 1.0001f, static_cast<float>(i));
    return x;
}

__device__ float g_sink;

// Streams the first n16 16-byte words of `buf` through L2 with all blocks (as a code-predictor pass streams its
// weights), with an evict-first policy when asked.
__device__ float stream_through_l2(const uint4* buf, long n16, int evict_first) {
    float acc = 0.f;
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += 4L * gridDim.x * blockDim.x) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long j = i + u * static_cast<long>(gridDim.x) * blockDim.x;
            if (j >= n16) { v[u] = make_uint4(0, 0, 0, 0); continue; }
            if (evict_first)
                asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                             : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(buf + j), "l"(policy));
            else
                asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(buf + j));
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc += __uint_as_float(v[u].x ^ v[u].w);
    }
    return acc;
}

__global__ void __launch_bounds__(256, 1) run_flushed(const float* logits, int n, const sampling_desc* gp, int calls,
                                                      long long* out, int* tok, unsigned* counter, const uint4* buf,
                                                      long n16, int evict_first) {
    __shared__ sampling_smem s;
    long long total = 0;
    int t = 0;
    float acc = 0.f;
    unsigned phase = 0;
    for (int c = 0; c < calls; ++c) {
        acc += stream_through_l2(buf, n16, evict_first);
        arrive(counter);
        wait(counter, ++phase);
        if (blockIdx.x == 0) {
            const long long a = clock64();
            t += sample_token(s, logits + (c % 8) * n, n, *gp, nullptr, megatts::sampling_uniform(1, c, 1));
            __syncthreads();
            total += clock64() - a;
        }
        arrive(counter);
        wait(counter, ++phase);
    }
    if (acc == 1.2345f) g_sink = acc;
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = total / calls, *tok = t;
}

template <int SLEEP, int EVICT = 0>
__global__ void __launch_bounds__(256, 1) run(const float* logits, int n, const sampling_desc* gp, int calls,
                                              long long* out, int* tok, unsigned* counter, int spin) {
    __shared__ sampling_smem s;
    long long total = 0;
    int t = 0;
    for (int c = 0; c < calls; ++c) {
        if (blockIdx.x == 0) {
            if (EVICT) {
                const float e = evict_icache<EVICT>(static_cast<float>(threadIdx.x + c));
                if (e == 1.2345f) g_sink = e;
                __syncthreads();
            }
            const long long a = clock64();
            t += sample_token(s, logits + (c % 8) * n, n, *gp, nullptr, megatts::sampling_uniform(1, c, 1));
            __syncthreads();
            total += clock64() - a;
        }
        if (spin) {
            arrive(counter);
            wait_with<SLEEP>(counter, c + 1);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = total / calls, *tok = t;
}

int main() {
    const int n = 2048;
    float* h = (float*)malloc(8 * n * 4);
    srand(3);
    for (int i = 0; i < 8 * n; ++i) {
        float u1 = (rand() + 1.f) / (RAND_MAX + 2.f), u2 = (rand() + 1.f) / (RAND_MAX + 2.f);
        h[i] = 3.f * sqrtf(-2 * logf(u1)) * cosf(6.2831853f * u2);
    }
    float* d; long long* o; int* t; unsigned* counter; sampling_desc* gp;
    cudaMalloc(&d, 8 * n * 4); cudaMalloc(&o, 16); cudaMalloc(&t, 4); cudaMalloc(&counter, 4); cudaMalloc(&gp, sizeof(sampling_desc));
    cudaMemcpy(d, h, 8 * n * 4, cudaMemcpyHostToDevice);
    sampling_desc p{0, 0.9f, 50, 1.0f};
    cudaMemcpy(gp, &p, sizeof p, cudaMemcpyHostToDevice);
    int clk, sms; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0); cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    auto go = [&](const char* name, auto kernel, int blocks, int spin) {
        cudaMemset(counter, 0, 4);
        kernel<<<blocks, 256>>>(d, n, gp, 200, o, t, counter, spin);
        cudaError_t e = cudaDeviceSynchronize();
        long long r; cudaMemcpy(&r, o, 8, cudaMemcpyDeviceToHost);
        printf("%-60s %s mean %.2f us per sample\n", name, e ? cudaGetErrorString(e) : "", r / (clk / 1000.0));
    };
    go("1 block, no barrier", run<32>, 1, 0);
    go("full grid, others idle (no barrier)", run<32>, sms, 0);
    go("full grid, others wait at barrier, nanosleep(32)", run<32>, sms, 1);
    go("full grid, others wait at barrier, nanosleep(256)", run<256>, sms, 1);
    go("full grid, others wait at barrier, nanosleep(1000)", run<1000>, sms, 1);
    go("full grid, others wait at barrier, no sleep", run<0>, sms, 1);
    {
        uint4* buf; const long bytes = 160L << 20;
        cudaMalloc(&buf, bytes); cudaMemset(buf, 1, bytes);
        for (int ef = 0; ef < 2; ++ef) for (long mb : {0L, 16L, 64L, 160L}) {
            cudaMemset(counter, 0, 4);
            run_flushed<<<sms, 256>>>(d, n, gp, 100, o, t, counter, buf, (mb << 20) / 16, ef);
            cudaError_t e = cudaDeviceSynchronize();
            long long r; cudaMemcpy(&r, o, 8, cudaMemcpyDeviceToHost);
            printf("full grid streams %3ld MB through L2 (%s) before each sample    %s mean %.2f us per sample\n", mb,
                   ef ? "evict-first" : "normal", e ? cudaGetErrorString(e) : "", r / (clk / 1000.0));
        }
    }
    go("1 block, 64 KB of other code run before each sample", run<32, 4096>, 1, 0);
    go("1 block, 256 KB of other code run before each sample", run<32, 16384>, 1, 0);
    go("full grid + barrier, 256 KB of other code before each sample", run<32, 16384>, sms, 1);
}

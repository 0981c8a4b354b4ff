// layer_streaming: how long a decoder layer's matrix phases take at one activation row when
// each block's whole share of a phase's weights is copied into shared memory by bulk copies
// (cp.async.bulk, no registers) two phases ahead, against the frame kernel's matvec (its first
// tile's fragments preloaded in registers before the barrier, the rest L2-prefetched, as at
// 9a3aa01). The question behind it: at B = 1 a code-predictor layer takes about 24 us where its 31 MB of
// weights need 7.4 us at the copy ceiling; is the rest the weights' round trips inside each
// phase's chain (which streaming ahead removes), or the chain itself (barrier, activation
// staging, reduction, epilogue), which it does not?
// Both variants run the 0.6B shape's phases (QKV 4096 x 1024 from RMS-normalised f32 rows,
// a barrier-only stand-in for the attention that rounds q to bf16, o 1024 x 2048 adding into
// x, gate/up 6144 x 1024 from normalised rows with SwiGLU, down 1024 x 3072 adding into x)
// over `layers` distinct layers' weights (more bytes than the L2 holds, so weights come from
// HBM as in the frame), a grid barrier after each phase, one block per SM. The streamed
// variants: two buffers, each phase's share copied when the phase two before it ends (copy
// sizes 4-96 KB, issued by the barrier's thread or by warp 1), and a ring of 12 KB chunks
// refilled as phases end (8, 12 or 16 slots); beside them the same chain with nothing copied,
// the ring's copies with no chain, and the barriers alone. They compute the same products (the
// streamed variants with plain FMAs, one warp a weight row; matvec with MMAs over permuted K),
// so their final x must agree to float rounding: printed as a check.
// A measurement tool, not part of the product:
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I. \
//     -o /tmp/layer_streaming bench/probes/layer_streaming.cu && /tmp/layer_streaming
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "bench/probes/phase_timer.cuh"
#include "kernels/common/mbarrier.cuh"
#include "kernels/megakernel/attention.cuh"
#include "kernels/megakernel/grid_sync.cuh"
#include "kernels/megakernel/matvec.cuh"

using namespace megatts::mk;

namespace {

constexpr int H = 1024, QKV = 4096, Q = 2048, INTER = 3072;
constexpr long qkv_elems = long(QKV) * H, o_elems = long(H) * Q, gu_elems = 2L * INTER * H, down_elems = long(H) * INTER;
constexpr long layer_elems = qkv_elems + o_elems + gu_elems + down_elems;

struct probe_args {
    const bf16* w;     // [layers][qkv | o | gate/up | down]
    const bf16* norm;  // [H]
    float* x;          // [H] the residual row
    float* y;          // [QKV] the QKV product
    bf16* ctx;         // [Q]
    bf16* act;         // [INTER]
    unsigned* counter;
    int layers, iters;
    int resident;  // streamed(): no copies, the buffers' stale bytes used as weights (the chain alone)
    int issuer;    // the thread that issues the bulk copies (0: the one that also arrives and polls)
    int chunk;     // streamed(): bytes a bulk copy
};

__device__ __forceinline__ const bf16* layer_w(const probe_args& a, int l) { return a.w + l * layer_elems; }

// ---- the frame kernel's way: matvec, its first tile preloaded before each barrier ----

// The L2 prefetch of every tile a block reads in a later matvec phase, as the frame kernel issued
// it when this probe was written (9a3aa01; since then it asks only for the tiles that preload()
// does not load, one barrier ahead: matvec.cuh's prefetch_rest()).
__device__ __forceinline__ void prefetch_tiles(const void* w, int n_rows, int K, int rows_per_tile) {
    const char* base = static_cast<const char*>(w);
    const long tile_bytes = static_cast<long>(rows_per_tile) * K * 2;
    for (int tile = blockIdx.x; tile < n_rows / rows_per_tile; tile += gridDim.x)
        for (long off = threadIdx.x * 128L; off < tile_bytes; off += blockDim.x * 128L)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(base + tile * tile_bytes + off));
}

__global__ void __launch_bounds__(k_threads, 1) with_matvec(probe_args a) {
    matvec_smem& s = probe_start();
    weight_frags f;
    unsigned phase = 0;
    auto barrier = [&](auto before_wait) {
        megatts::arrive(a.counter);
        before_wait();
        megatts::wait(a.counter, ++phase);
    };
    const act_source normed{a.x, H, a.norm, 1e-6f, nullptr, H};
    const act_source ctx{nullptr, Q, nullptr, 1e-6f, nullptr, Q, a.ctx};
    const act_source mid{nullptr, INTER, nullptr, 1e-6f, nullptr, INTER, a.act};
    auto add = [&](int n, int r, float v) { a.x[n] += v; };
    preload<2>(f, layer_w(a, 0), QKV, H);
    for (int it = 0; it < a.iters; ++it)
        for (int l = 0; l < a.layers; ++l) {
            const bf16* wq = layer_w(a, l);
            const bf16* wo = wq + qkv_elems;
            const bf16* wgu = wo + o_elems;
            const bf16* wd = wgu + gu_elems;
            const bf16* next = layer_w(a, l + 1 < a.layers ? l + 1 : 0);
            matvec<2>(s, f, true, wq, QKV, H, 1, normed, [&](int n, int r, float v) { a.y[n] = v; });
            barrier([&] { prefetch_tiles(wo, H, Q, 16); });
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < Q; i += gridDim.x * blockDim.x)
                a.ctx[i] = __float2bfloat16(a.y[i]);
            barrier([&] {
                preload<1>(f, wo, H, Q, true);
                prefetch_tiles(wgu, 2 * INTER, H, 16);
                prefetch_tiles(wd, H, INTER, 16);
            });
            matvec<1>(s, f, true, wo, H, Q, 1, ctx, add, true);
            barrier([&] {
                preload<1>(f, wgu, 2 * INTER, H);
                prefetch_tiles(next, QKV, H, 32);
            });
            matvec<1, true>(s, f, true, wgu, 2 * INTER, H, 1, normed, [&](int n, int r, float g, float u) {
                a.act[n] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
            });
            barrier([&] { preload<1>(f, wd, H, INTER, true); });
            matvec<1>(s, f, true, wd, H, INTER, 1, mid, add, true);
            barrier([&] { preload<2>(f, next, QKV, H); });
        }
}

// ---- weights streamed into shared memory two phases ahead ----

constexpr int k_busy_blocks = 128;  // the blocks that hold a share of every product
constexpr int k_buffer_bytes = 48 * H * 2;  // the largest share: gate/up's 48 rows (96 KB)

struct streamed_smem {
    alignas(128) bf16 w[2][k_buffer_bytes / 2];
    alignas(16) bf16 a[INTER];  // the staged activation row
    float partial[k_warps];
    std::uint64_t full[2];
};

// Bytes of a block's share of matrix phase m (0..3 of a layer: QKV, o, gate/up, down).
__host__ __device__ constexpr int share_bytes(int m) {
    return m == 0 ? 32 * H * 2 : m == 1 ? 8 * Q * 2 : m == 2 ? 48 * H * 2 : 8 * INTER * 2;
}

// Matrix phase m of layer l: this block's rows and bytes.
struct share {
    const bf16* src;
    int bytes;
};
__device__ __forceinline__ share share_of(const probe_args& a, int l, int m) {
    const bf16* w = layer_w(a, l);
    const int b = blockIdx.x;
    switch (m) {
        case 0: return {w + long(32 * b) * H, share_bytes(0)};
        case 1: return {w + qkv_elems + long(8 * b) * Q, share_bytes(1)};
        case 2: return {w + qkv_elems + o_elems + long(48 * b) * H, share_bytes(2)};
        default: return {w + qkv_elems + o_elems + gu_elems + long(8 * b) * INTER, share_bytes(3)};
    }
}

// Thread 0 asks for matrix phase `seq`'s share (sequence number over the launch) into buffer
// seq % 2; the buffer's barrier completes when the bytes have landed.
__device__ __forceinline__ void issue(streamed_smem& s, const probe_args& a, long seq) {
    if (static_cast<int>(threadIdx.x) != a.issuer || blockIdx.x >= k_busy_blocks) return;
    const long per_iter = 4L * a.layers;
    const int m = seq % 4, l = (seq % per_iter) / 4, buf = seq % 2;
    const share sh = share_of(a, l, m);
    // The buffer's last readers finished before the block barrier that preceded this call.
    if (a.resident) {
        megatts::mbarrier::arrive_if(&s.full[buf], true);
        return;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    megatts::mbarrier::arrive_expect_tx(&s.full[buf], sh.bytes);
    for (int off = 0; off < sh.bytes; off += a.chunk)
        megatts::mbarrier::bulk_copy(reinterpret_cast<char*>(s.w[buf]) + off, reinterpret_cast<const char*>(sh.src) + off,
                                     min(a.chunk, sh.bytes - off), &s.full[buf]);
}

// Stages a bf16 row of K (K / 8 16-byte pieces) into s.a.
template <int K>
__device__ __forceinline__ void stage_bf16(bf16* dst, const bf16* src) {
    for (int i = threadIdx.x; i < K / 8; i += k_threads) megatts::cp_async::copy16(dst + 8 * i, src + 8 * i);
    megatts::cp_async::wait_all();
    __syncthreads();
}

// Stages x RMS-normalised, times the norm's weight, as bf16 (one float4 a thread).
__device__ __forceinline__ void stage_normed(bf16* out, float* partial, const probe_args& a) {
    static_assert(H == 4 * k_threads, "a float4 a thread");
    const float4 v = __ldcg(reinterpret_cast<const float4*>(a.x) + threadIdx.x);
    const uint2 nw = __ldg(reinterpret_cast<const uint2*>(a.norm) + threadIdx.x);
    float ss = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    ss = warp_sum(ss);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < k_warps; ++w) total += partial[w];
    const float inv = rsqrtf(total / H + 1e-6f);
    const float w[4] = {__uint_as_float(nw.x << 16), __uint_as_float(nw.x & 0xffff0000u), __uint_as_float(nw.y << 16),
                        __uint_as_float(nw.y & 0xffff0000u)};
    __nv_bfloat162* dst = reinterpret_cast<__nv_bfloat162*>(out + 4 * threadIdx.x);
    dst[0] = __floats2bfloat162_rn(v.x * inv * w[0], v.y * inv * w[1]);
    dst[1] = __floats2bfloat162_rn(v.z * inv * w[2], v.w * inv * w[3]);
    __syncthreads();
}

// Whole block: n buffers' "full" barriers, one arrival each (the issuing thread's).
__device__ __forceinline__ void init_barriers(std::uint64_t* full, int n) {
    if (threadIdx.x == 0) {
        for (int i = 0; i < n; ++i) megatts::mbarrier::init(&full[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
}

__device__ __forceinline__ float dot8(const uint4& w, const uint4& x) {
    const unsigned wu[4] = {w.x, w.y, w.z, w.w}, xu[4] = {x.x, x.y, x.z, x.w};
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        acc = fmaf(__uint_as_float(wu[i] << 16), __uint_as_float(xu[i] << 16), acc);
        acc = fmaf(__uint_as_float(wu[i] & 0xffff0000u), __uint_as_float(xu[i] & 0xffff0000u), acc);
    }
    return acc;
}

// Rows row[0..RPW) (in shared memory) times the staged row, one warp.
template <int K, int RPW>
__device__ __forceinline__ void dots_rows(const bf16* const (&row)[RPW], const bf16* act, float (&out)[RPW]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < RPW; ++j) out[j] = 0.f;
#pragma unroll 2
    for (int k = lane * 8; k < K; k += 256) {
        const uint4 x = *reinterpret_cast<const uint4*>(act + k);
#pragma unroll
        for (int j = 0; j < RPW; ++j) out[j] += dot8(*reinterpret_cast<const uint4*>(row[j] + k), x);
    }
#pragma unroll
    for (int j = 0; j < RPW; ++j) out[j] = warp_sum(out[j]);
}

// Matrix phase m at one row: stage() stages the activation row into `act`, land(m) waits for the
// phase's share of weights, then warp w's rows w + 8 j (RPW of them, K wide; row(m, r, K) is row r
// of the share in shared memory) times the staged row.
template <int K, int RPW, class Stage, class Land, class Row>
__device__ __forceinline__ void product(int m, const Stage& stage, const Land& land, const Row& row, const bf16* act,
                                        float (&out)[RPW]) {
    stage();
    land(m);
    const int warp = threadIdx.x / 32;
    const bf16* rows[RPW];
#pragma unroll
    for (int j = 0; j < RPW; ++j) rows[j] = row(m, warp + 8 * j, K);
    dots_rows<K, RPW>(rows, act, out);
}

// One layer's five phases at one row as the streamed variants run them. land(m) waits until
// matrix phase m's share (0..3: QKV, o, gate/up, down) has landed, row(m, r, K) is row r of it,
// end_matrix(m) ends the phase (the grid barrier, and the copies that the phase's end frees).
template <class Land, class Row, class End>
__device__ __forceinline__ void streamed_layer(bf16* staged, float* partial, const probe_args& a, unsigned& phase,
                                               const Land& land, const Row& row, const End& end_matrix) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, b = blockIdx.x;
    const bool busy = b < k_busy_blocks;
    auto normed = [&] { stage_normed(staged, partial, a); };
    if (busy) {  // QKV: 32 rows a block, 4 a warp
        float v[4];
        product<H, 4>(0, normed, land, row, staged, v);
        if (lane == 0)
#pragma unroll
            for (int j = 0; j < 4; ++j) a.y[32 * b + warp + 8 * j] = v[j];
    }
    end_matrix(0);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < Q; i += gridDim.x * blockDim.x)
        a.ctx[i] = __float2bfloat16(a.y[i]);
    megatts::arrive(a.counter);
    megatts::wait(a.counter, ++phase);
    if (busy) {  // o: 8 rows a block, one a warp
        float v[1];
        product<Q, 1>(1, [&] { stage_bf16<Q>(staged, a.ctx); }, land, row, staged, v);
        if (lane == 0) a.x[8 * b + warp] += v[0];
    }
    end_matrix(1);
    if (busy) {  // gate/up: three 16-row tiles (8 gate, 8 up rows) a block, 6 rows a warp
        float v[6];
        product<H, 6>(2, normed, land, row, staged, v);
        // Warp w holds rows w + 8 j: tile j / 2's gate (j even) or up (j odd) row w.
        if (lane == 0)
#pragma unroll
            for (int t = 0; t < 3; ++t)
                a.act[(3 * b + t) * 8 + warp] = __float2bfloat16(v[2 * t] / (1.0f + expf(-v[2 * t])) * v[2 * t + 1]);
    }
    end_matrix(2);
    if (busy) {  // down: 8 rows a block, one a warp
        float v[1];
        product<INTER, 1>(3, [&] { stage_bf16<INTER>(staged, a.act); }, land, row, staged, v);
        if (lane == 0) a.x[8 * b + warp] += v[0];
    }
    end_matrix(3);
}

__global__ void __launch_bounds__(k_threads, 1) streamed(probe_args a) {
    extern __shared__ __align__(128) unsigned char raw[];
    streamed_smem& s = *reinterpret_cast<streamed_smem*>(raw);
    init_barriers(s.full, 2);
    unsigned phase = 0;
    long seq = 0;  // the matrix phase this block works on next
    const long total = 4L * a.layers * a.iters;
    issue(s, a, 0);
    issue(s, a, 1);
    // Ends matrix phase `seq`: the block is done with its buffer, so the phase two on goes into it.
    auto end_matrix = [&](int) {
        megatts::arrive(a.counter);
        if (seq + 2 < total) issue(s, a, seq + 2);
        ++seq;
        megatts::wait(a.counter, ++phase);
    };
    auto land = [&](int) { megatts::mbarrier::wait(&s.full[seq % 2], (seq / 2) % 2); };
    auto row = [&](int, int r, int K) -> const bf16* { return s.w[seq % 2] + long(r) * K; };
    for (int it = 0; it < a.iters; ++it)
        for (int l = 0; l < a.layers; ++l) streamed_layer(s.a, s.partial, a, phase, land, row, end_matrix);
}

// ---- weights streamed through a ring of chunks, as far ahead as the ring holds ----

// Chunks of 12 KB: a whole number of rows at K 1024, 2048 and 3072 (2, 4 and 6 KB), so no row
// straddles two ring slots. 16 slots, 192 KB: about 0.8 of a layer's 240 KB share a block.
constexpr int k_ring_chunk = 12 * 1024, k_ring_slots = 16;

struct ring_smem {
    alignas(128) unsigned char w[k_ring_slots][k_ring_chunk];
    alignas(16) bf16 a[INTER];
    float partial[k_warps];
    std::uint64_t full[k_ring_slots];
};

__device__ __forceinline__ int chunks_of(int bytes) { return (bytes + k_ring_chunk - 1) / k_ring_chunk; }

// The producer's place in the launch's stream of chunks (thread 0 of a busy block).
struct ring_producer {
    long seq = 0;    // the matrix phase whose chunks go out next
    int within = 0;  // its next chunk
    long issued = 0; // chunks issued so far
};

// Issues chunks while the ring's first SLOTS slots have one free: every chunk before
// `consumed` has been read. (SLOTS a compile-time constant: a run-time one made each chunk's
// 64-bit division a long part of the issuing thread's loop, the copies alone 7.1 -> 10.2 us a layer.)
template <int SLOTS>
__device__ __forceinline__ void pump(ring_smem& s, const probe_args& a, ring_producer& p, long consumed, long total) {
    if (static_cast<int>(threadIdx.x) != a.issuer || blockIdx.x >= k_busy_blocks) return;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    const long per_iter = 4L * a.layers;
    while (p.seq < total && p.issued - consumed < SLOTS) {
        const share sh = share_of(a, (p.seq % per_iter) / 4, p.seq % 4);
        const int off = p.within * k_ring_chunk, bytes = min(k_ring_chunk, sh.bytes - off);
        const int slot = p.issued % SLOTS;
        megatts::mbarrier::arrive_expect_tx(&s.full[slot], bytes);
        megatts::mbarrier::bulk_copy(s.w[slot], reinterpret_cast<const char*>(sh.src) + off, bytes, &s.full[slot]);
        ++p.issued;
        if (++p.within == chunks_of(sh.bytes)) p.within = 0, ++p.seq;
    }
}

template <int SLOTS>
__global__ void __launch_bounds__(k_threads, 1) ring_streamed(probe_args a) {
    extern __shared__ __align__(128) unsigned char raw[];
    ring_smem& s = *reinterpret_cast<ring_smem*>(raw);
    init_barriers(s.full, k_ring_slots);
    const long total = 4L * a.layers * a.iters;
    ring_producer prod;
    long consumed = 0;  // chunks of the matrix phases before this one
    pump<SLOTS>(s, a, prod, consumed, total);
    unsigned phase = 0;
    auto end_matrix = [&](int m) {
        megatts::arrive(a.counter);
        consumed += chunks_of(share_bytes(m));
        pump<SLOTS>(s, a, prod, consumed, total);
        megatts::wait(a.counter, ++phase);
    };
    auto land = [&](int m) {
        for (long c = consumed; c < consumed + chunks_of(share_bytes(m)); ++c)
            megatts::mbarrier::wait(&s.full[c % SLOTS], (c / SLOTS) % 2);
    };
    // K is 1024, 2048 or 3072: a row is 2, 4 or 6 KB, and no row straddles two 12 KB slots.
    auto row = [&](int, int r, int K) -> const bf16* {
        const long byte = long(r) * K * 2;
        return reinterpret_cast<const bf16*>(s.w[(consumed + byte / k_ring_chunk) % SLOTS] + byte % k_ring_chunk);
    };
    for (int it = 0; it < a.iters; ++it)
        for (int l = 0; l < a.layers; ++l) streamed_layer(s.a, s.partial, a, phase, land, row, end_matrix);
}

// ---- the ring's copies alone: no barriers, no products ----

template <int SLOTS>
__global__ void __launch_bounds__(k_threads, 1) copies_alone(probe_args a) {
    extern __shared__ __align__(128) unsigned char raw[];
    ring_smem& s = *reinterpret_cast<ring_smem*>(raw);
    init_barriers(s.full, k_ring_slots);
    if (blockIdx.x >= k_busy_blocks) return;
    const long total = 4L * a.layers * a.iters;
    ring_producer prod;
    long consumed = 0;
    pump<SLOTS>(s, a, prod, consumed, total);
    for (long seq = 0; seq < total; ++seq) {
        const int n = chunks_of(share_bytes(seq % 4));
        for (int i = 0; i < n; ++i) {
            const long c = consumed + i;
            megatts::mbarrier::wait(&s.full[c % SLOTS], (c / SLOTS) % 2);
        }
        __syncthreads();
        consumed += n;
        pump<SLOTS>(s, a, prod, consumed, total);
    }
}

// ---- barriers alone, five a layer ----

__global__ void __launch_bounds__(k_threads, 1) barriers_only(probe_args a) {
    unsigned phase = 0;
    for (int it = 0; it < a.iters; ++it)
        for (int l = 0; l < a.layers; ++l)
            for (int p = 0; p < 5; ++p) {
                megatts::arrive(a.counter);
                megatts::wait(a.counter, ++phase);
            }
}

// Best of three launches, us a layer.
float time_layers(void (*kernel)(probe_args), probe_args a, int blocks, int smem) {
    const float ms = best_launch_ms(kernel, a, blocks, smem);
    return ms < 0 ? -1.f : ms * 1000.f / (a.iters * a.layers);
}

// Small pseudo-random bf16 weights (a hash of the index), so the products are not all zero.
__global__ void fill(bf16* w, long n, float scale) {
    for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u;
        h ^= h >> 15;
        w[i] = __float2bfloat16(((h & 0xffff) / 65535.f - 0.5f) * scale);
    }
}

std::vector<float> final_x(void (*kernel)(probe_args), probe_args a, int blocks, int smem) {
    std::vector<float> ones(H, 0.5f);
    cudaMemcpy(a.x, ones.data(), H * 4, cudaMemcpyHostToDevice);
    a.iters = 1;
    time_layers(kernel, a, blocks, smem);  // three launches: x after 3 x layers layers
    std::vector<float> x(H);
    cudaMemcpy(x.data(), a.x, H * 4, cudaMemcpyDeviceToHost);
    return x;
}

}  // namespace

int main(int argc, char** argv) {
    cudaDeviceProp prop;
    const int blocks = probe_blocks(prop);
    probe_args a{};
    a.layers = argc > 1 ? std::atoi(argv[1]) : 24;
    a.chunk = 16384;
    bf16* w;
    cudaMalloc(&w, a.layers * layer_elems * 2);
    fill<<<1024, 256>>>(w, a.layers * layer_elems, 0.05f);
    bf16* norm;
    cudaMalloc(&norm, H * 2);
    fill<<<4, 256>>>(norm, H, 0.5f);
    cudaMalloc(&a.x, H * 4);
    cudaMalloc(&a.y, QKV * 4);
    cudaMalloc(&a.ctx, Q * 2);
    cudaMalloc(&a.act, INTER * 2);
    cudaMalloc(&a.counter, 4);
    a.w = w;
    a.norm = norm;
    const int mv_smem = sizeof(matvec_smem), st_smem = sizeof(streamed_smem);
    const std::vector<float> xa = final_x(with_matvec, a, blocks, mv_smem);
    const std::vector<float> xb = final_x(streamed, a, blocks, st_smem);
    const int ring_bytes = sizeof(ring_smem);
    const std::vector<float> xr = final_x(ring_streamed<k_ring_slots>, a, blocks, ring_bytes);
    double num = 0, den = 0;
    for (int i = 0; i < H; ++i) num += (xa[i] - xb[i]) * double(xa[i] - xb[i]), den += double(xa[i]) * xa[i];
    std::printf("%s, %d blocks, %d layers of %.1f MB (%.0f MB in all; L2 %d MB)\n", prop.name, blocks, a.layers,
                layer_elems * 2 / 1e6, a.layers * layer_elems * 2 / 1e6, prop.l2CacheSize >> 20);
    std::printf("check: final x, streamed against matvec: relative error %.3g (x rms %.3g)\n", std::sqrt(num / den),
                std::sqrt(den / H));
    num = 0;
    for (int i = 0; i < H; ++i) num += (xa[i] - xr[i]) * double(xa[i] - xr[i]);
    std::printf("check: final x, ring against matvec: relative error %.3g\n", std::sqrt(num / den));
    a.iters = 10;
    const float t_mv = time_layers(with_matvec, a, blocks, mv_smem);
    const float t_st = time_layers(streamed, a, blocks, st_smem);
    const float t_ring = time_layers(ring_streamed<k_ring_slots>, a, blocks, ring_bytes);
    const float t_copies = time_layers(copies_alone<k_ring_slots>, a, blocks, ring_bytes);
    float t_chunk[3];
    const int chunk_sizes[3] = {4096, 32768, 98304};
    for (int i = 0; i < 3; ++i) {
        a.chunk = chunk_sizes[i];
        t_chunk[i] = time_layers(streamed, a, blocks, st_smem);
    }
    a.chunk = 16384;
    const int depths[2] = {8, 12};  // a phase's share is at most 8 chunks (gate/up's 96 KB)
    float t_depth[2];
    t_depth[0] = time_layers(ring_streamed<8>, a, blocks, ring_bytes);
    t_depth[1] = time_layers(ring_streamed<12>, a, blocks, ring_bytes);
    a.issuer = 32;
    const float t_st32 = time_layers(streamed, a, blocks, st_smem);
    const float t_ring32 = time_layers(ring_streamed<k_ring_slots>, a, blocks, ring_bytes);
    a.issuer = 0;
    a.resident = 1;
    const float t_res = time_layers(streamed, a, blocks, st_smem);
    a.resident = 0;
    const float t_bar = time_layers(barriers_only, a, blocks, 0);
    const double bytes = layer_elems * 2.0;
    std::printf("us a layer (5 phases, barriers included):\n");
    std::printf("  matvec, first tile preloaded      %7.2f  (%.0f GB/s of weights)\n", t_mv, bytes / t_mv / 1e3);
    std::printf("  weights streamed two phases ahead %7.2f  (%.0f GB/s of weights)\n", t_st, bytes / t_st / 1e3);
    std::printf("  a ring of 16 x 12 KB, ahead       %7.2f  (%.0f GB/s of weights)\n", t_ring, bytes / t_ring / 1e3);
    std::printf("  two phases ahead, copies by warp 1 %6.2f  (%.0f GB/s of weights)\n", t_st32, bytes / t_st32 / 1e3);
    std::printf("  the ring, copies by warp 1        %7.2f  (%.0f GB/s of weights)\n", t_ring32, bytes / t_ring32 / 1e3);
    for (int i = 0; i < 3; ++i)
        std::printf("  two phases ahead, %2d KB copies    %7.2f  (%.0f GB/s of weights)\n", chunk_sizes[i] / 1024, t_chunk[i],
                    bytes / t_chunk[i] / 1e3);
    for (int i = 0; i < 2; ++i)
        std::printf("  a ring of %2d x 12 KB, ahead       %7.2f  (%.0f GB/s of weights)\n", depths[i], t_depth[i],
                    bytes / t_depth[i] / 1e3);
    std::printf("  the ring's copies alone           %7.2f  (%.0f GB/s; %.1f GB/s a busy SM)\n", t_copies,
                bytes / t_copies / 1e3, bytes / t_copies / 1e3 / k_busy_blocks);
    std::printf("  two phases ahead, no weights copied %5.2f\n", t_res);
    std::printf("  five barriers alone               %7.2f\n", t_bar);
    return 0;
}

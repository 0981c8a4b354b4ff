// attention_walk: the talker's attention phase alone (16 query heads, 8 key heads, head dim 128,
// caches laid out as the frame kernel's: [slot][layer][position][key head][128] bf16), on a full
// grid with a grid barrier after each phase, at R rows of P cached positions, each phase over the
// next of 28 layers' caches (so that every phase reads its caches from HBM, as a frame does).
// What it compares, per phase (barrier included), with the unique bytes each phase reads:
//  - the frame kernel's walk (attention.cuh: one warp a (row, head) pair at these rows, its groups
//    of 8 positions through the warp's ring in shared memory, the query in f32);
//  - the same copies into the same ring with nothing computed: what the walk's memory traffic
//    costs alone, at the walk's depth;
//  - a walk on the tensor cores: one warp a (row, key head) pair, both query heads at once, groups
//    of 16 positions (S = Q K^T and O^T = V^T P^T as m16n8k16 products from the ring by
//    ldmatrix; the query and the probabilities rounded to bf16);
//  - the barrier alone.
// And the largest difference between the two walks' outputs. A measurement tool, not part of the
// product:
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I. \
//     -o /tmp/attention_walk bench/probes/attention_walk.cu && /tmp/attention_walk
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "bench/probes/phase_timer.cuh"
#include "kernels/common/mma_bf16.cuh"
#include "kernels/megakernel/attention.cuh"
#include "kernels/megakernel/grid_sync.cuh"
using namespace megatts::mk;

namespace {

constexpr int k_heads = 16, k_kv_heads = 8, k_group = k_heads / k_kv_heads, k_layers = 28;
constexpr int k_probe_rows = 128, k_max_positions = 192;
constexpr long k_row_stride = k_kv_heads * k_head_dim;  // elements between two positions

struct probe_args {
    const bf16* k;  // [k_probe_rows][k_layers][k_max_positions][k_kv_heads][128]
    const bf16* v;
    const float* q;  // [k_probe_rows][k_heads][128]
    bf16* out;       // [k_probe_rows][k_heads][128]
    unsigned* counter;
    int R, P, iters;
};

enum config { product_walk, stream_l1, stream_l2, mma_walk, barrier_only };
constexpr const char* names[] = {"walk (attention.cuh)", "its copies alone (.ca)", "its copies alone (.cg)",
                                 "tensor-core walk, a key head a warp", "barrier alone"};

__device__ long cache_at(int r, int layer, int kvh) {
    return (static_cast<long>(r) * k_layers + layer) * k_max_positions * k_row_stride + kvh * k_head_dim;
}

// --- the tensor-core walk -------------------------------------------------------------------
constexpr int k_mma_group = 16;  // positions a group
constexpr int k_mma_depth = 2;   // groups in flight a warp (16 KB, the size of a walk_ring)
struct mma_ring {
    uint4 k[k_mma_depth][k_mma_group][16], v[k_mma_depth][k_mma_group][16];  // [slot][position][chunk ^ (position & 7)]
};
static_assert(sizeof(mma_ring) <= sizeof(walk_ring));

__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
    const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&p);
}

__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], const void* p) {
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
}

__device__ __forceinline__ void ldsm_x4_trans(std::uint32_t (&r)[4], const void* p) {
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
}

// Copies group g (positions j0 .. j0 + 15, zero past hi) of a key head into ring slot `slot`.
__device__ __forceinline__ void mma_stage(mma_ring& ring, int slot, const bf16* kb, const bf16* vb, int j0, int hi) {
    const int lane = threadIdx.x % 32, c = lane % 16;
#pragma unroll
    for (int i = 0; i < k_mma_group / 2; ++i) {
        const int p = 2 * i + lane / 16, j = j0 + p;
        const bool valid = j < hi;
        const long at = (valid ? j : j0) * k_row_stride + 8 * c;
        megatts::cp_async::copy16_l1(&ring.k[slot][p][c ^ (p & 7)], kb + at, valid);
        megatts::cp_async::copy16_l1(&ring.v[slot][p][c ^ (p & 7)], vb + at, valid);
    }
    megatts::cp_async::commit();
}

// One warp: both query heads of key head kvh of row r over positions [0, hi).
__device__ void mma_walk_pair(mma_ring& ring, const bf16* kb, const bf16* vb, const float* q0, int hi, bf16* out0) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    // The query as an A fragment: rows 0 and 1 (the two heads) real, rows 2..15 zero.
    std::uint32_t qa[8], qb[8];
#pragma unroll
    for (int s = 0; s < 8; ++s) {
        const float* qg = q0 + g * k_head_dim + 16 * s + 2 * t;
        qa[s] = g < k_group ? pack_bf16(qg[0], qg[1]) : 0u;
        qb[s] = g < k_group ? pack_bf16(qg[8], qg[9]) : 0u;
    }
    const int groups = (hi + k_mma_group - 1) / k_mma_group;
#pragma unroll
    for (int d = 0; d < k_mma_depth; ++d) {
        if (d < groups) mma_stage(ring, d, kb, vb, d * k_mma_group, hi);
        else megatts::cp_async::commit();
    }
    const float scale = rsqrtf(static_cast<float>(k_head_dim));
    float o[8][4] = {};
    float m = -INFINITY, l = 0.f;
    for (int gi = 0; gi < groups; ++gi) {
        const int slot = gi % k_mma_depth, j0 = gi * k_mma_group;
        megatts::cp_async::wait_groups<k_mma_depth - 1>();
        __syncwarp();  // every lane's copies of the group have landed
        float s[2][2][4] = {};  // [position tile][k-step parity][fragment]
#pragma unroll
        for (int n = 0; n < 2; ++n)
#pragma unroll
            for (int qd = 0; qd < 4; ++qd) {
                const int row = 8 * n + (lane & 7), chunk = 4 * qd + (lane >> 3);
                std::uint32_t b[4];
                ldsm_x4(b, &ring.k[slot][row][chunk ^ (row & 7)]);
                megatts::mma_bf16(s[n][0], qa[2 * qd], 0u, qb[2 * qd], 0u, b[0], b[1]);
                megatts::mma_bf16(s[n][1], qa[2 * qd + 1], 0u, qb[2 * qd + 1], 0u, b[2], b[3]);
            }
        // Lane (g, t): head g's scores at positions 2t, 2t + 1 (tile 0) and 8 + 2t, 9 + 2t (tile 1).
        float sc[4] = {s[0][0][0] + s[0][1][0], s[0][0][1] + s[0][1][1], s[1][0][0] + s[1][1][0],
                       s[1][0][1] + s[1][1][1]};
        float gm = -INFINITY;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int j = j0 + 8 * (i / 2) + 2 * t + i % 2;
            sc[i] = j < hi ? sc[i] * scale : -INFINITY;
            gm = fmaxf(gm, sc[i]);
        }
        gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, 1));
        gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, 2));
        const float m_new = fmaxf(m, gm);
        const float corr = expf(m - m_new);
        float p[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) p[i] = g < k_group ? expf(sc[i] - m_new) : 0.f;
        l = l * corr + ((p[0] + p[1]) + (p[2] + p[3]));
        m = m_new;
        const float c0 = __shfl_sync(0xffffffffu, corr, 0), c1 = __shfl_sync(0xffffffffu, corr, 4);
        const std::uint32_t b0 = pack_bf16(p[0], p[1]), b1 = pack_bf16(p[2], p[3]);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            o[i][0] *= c0, o[i][1] *= c1, o[i][2] *= c0, o[i][3] *= c1;
            const int mtx = lane >> 3, row = (mtx >> 1) * 8 + (lane & 7), chunk = 2 * i + (mtx & 1);
            std::uint32_t a[4];
            ldsm_x4_trans(a, &ring.v[slot][row][chunk ^ (row & 7)]);
            megatts::mma_bf16(o[i], a[0], a[1], a[2], a[3], b0, b1);
        }
        __syncwarp();  // the slot's reads are done before it is staged again
        if (gi + k_mma_depth < groups) mma_stage(ring, slot, kb, vb, (gi + k_mma_depth) * k_mma_group, hi);
        else megatts::cp_async::commit();
    }
    megatts::cp_async::wait_all();
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float l0 = __shfl_sync(0xffffffffu, l, 0), l1 = __shfl_sync(0xffffffffu, l, 4);
    if (t == 0)
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            out0[16 * i + g] = __float2bfloat16(o[i][0] / l0);
            out0[k_head_dim + 16 * i + g] = __float2bfloat16(o[i][1] / l1);
            out0[16 * i + 8 + g] = __float2bfloat16(o[i][2] / l0);
            out0[k_head_dim + 16 * i + 8 + g] = __float2bfloat16(o[i][3] / l1);
        }
}

// --- the phases -----------------------------------------------------------------------------
template <int C>
__global__ void __launch_bounds__(k_threads, 1) phase(probe_args a) {
    matvec_smem& mv = probe_start();
    attention_smem& sm = *reinterpret_cast<attention_smem*>(&mv);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, grid = static_cast<int>(gridDim.x);
    const int pairs = C == mma_walk ? a.R * k_kv_heads : a.R * k_heads;
    const int per_block = (pairs + grid - 1) / grid;
    const int width = per_block <= 1 ? 8 : per_block == 2 ? 4 : per_block <= 4 ? 2 : 1;
    const int teams = k_attn_warps / width, team = warp / width, t = warp % width;
    const float scale = rsqrtf(static_cast<float>(k_head_dim));
    for (int it = 1; it <= a.iters; ++it) {
        const int layer = it % k_layers;
        if constexpr (C == mma_walk) {
            for (int u = blockIdx.x * k_attn_warps + warp; u < pairs; u += grid * k_attn_warps) {
                const int r = u / k_kv_heads, kvh = u % k_kv_heads;
                const long at = cache_at(r, layer, kvh);
                mma_walk_pair(*reinterpret_cast<mma_ring*>(&sm.ring[warp]), a.k + at, a.v + at,
                              a.q + (r * k_heads + k_group * kvh) * k_head_dim, a.P,
                              a.out + (r * k_heads + k_group * kvh) * k_head_dim);
            }
        } else if constexpr (C != barrier_only) {
            for (int round = 0; round < pairs; round += grid * teams) {
                const int u = round + blockIdx.x * teams + team;
                const bool active = u < pairs;
                attention_task task{};
                if (active) {
                    const int r = u / k_heads, h = u % k_heads;
                    const long at = cache_at(r, layer, h / k_group);
                    // part 1 of 1: no current position to seed the walk with; the output stored directly
                    task = {a.k + at, a.v + at, k_row_stride, 0, a.P, 1, 1, nullptr, nullptr,
                            a.out + (r * k_heads + h) * k_head_dim};
                    walk_ring& ring = sm.ring[warp];
                    walk_cursor cursor = start_walk(ring, t, width, task);
                    if constexpr (C == product_walk) {
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            sm.q[warp][lane + 32 * i] = a.q[(r * k_heads + h) * k_head_dim + lane + 32 * i];
                        __syncwarp();
                        walk(sm, team, t, width, task, scale, cursor, 0.f);
                    } else {
                        int slot = 0;
                        for (int w = t; w < k_walkers; w += width)
                            for (int j0 = w * k_wide_positions; j0 < a.P; j0 += k_walker_stride) {
                                megatts::cp_async::wait_groups<k_walk_depth - 1>();
                                if constexpr (C == stream_l1) {
                                    stage_next(ring, slot, cursor, width, task);
                                } else if (cursor.w < k_walkers) {
                                    const int half = lane / 16, c = lane % 16;
#pragma unroll
                                    for (int v = 0; v < k_wide_loads; ++v) {
                                        const int j = cursor.j0 + 2 * v + half;
                                        const bool valid = j < task.hi;
                                        const long off = (valid ? j : cursor.j0) * task.row_stride + 8 * c;
                                        megatts::cp_async::copy16(&ring.k[slot][v][lane], task.k_base + off, valid);
                                        megatts::cp_async::copy16(&ring.v[slot][v][lane], task.v_base + off, valid);
                                    }
                                    cursor.advance(width, task);
                                    megatts::cp_async::commit();
                                } else {
                                    megatts::cp_async::commit();
                                }
                                slot = slot + 1 == k_walk_depth ? 0 : slot + 1;
                            }
                        megatts::cp_async::wait_all();
                    }
                }
                __syncthreads();
                if (C == product_walk && active && t == 0) finish_walk(sm, team, task);
                __syncthreads();
            }
        }
        megatts::arrive(a.counter);
        megatts::wait(a.counter, it);
    }
}

__global__ void fill_bf16(bf16* p, long n, unsigned seed) {
    for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        p[i] = __float2bfloat16((static_cast<float>(h & 0xffff) / 32768.f - 1.f) * 2.f);
    }
}

float max_abs(const std::vector<bf16>& x) {
    float r = 0;
    for (bf16 v : x) r = std::fmax(r, std::fabs(__bfloat162float(v)));
    return r;
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    const int blocks = probe_blocks(prop);
    const long cache = static_cast<long>(k_probe_rows) * k_layers * k_max_positions * k_row_stride;
    const long q_n = static_cast<long>(k_probe_rows) * k_heads * k_head_dim;
    bf16 *k, *v, *out;
    float* q;
    probe_args a{};
    cudaMalloc(&k, cache * 2);
    cudaMalloc(&v, cache * 2);
    cudaMalloc(&q, q_n * 4);
    cudaMalloc(&out, q_n * 2);
    cudaMalloc(&a.counter, 4);
    fill_bf16<<<1024, 256>>>(k, cache, 1u);
    fill_bf16<<<1024, 256>>>(v, cache, 2u);
    {
        std::vector<float> hq(static_cast<std::size_t>(q_n));
        unsigned s = 3;
        for (auto& x : hq) s = s * 1664525u + 1013904223u, x = (static_cast<float>(s >> 8) / 16777216.f - 0.5f) * 2.f;
        cudaMemcpy(q, hq.data(), q_n * 4, cudaMemcpyHostToDevice);
    }
    a.k = k, a.v = v, a.q = q, a.out = out, a.P = 191;

    // Agreement of the two walks at 128 rows, one phase each.
    a.R = k_probe_rows, a.iters = 1;
    std::vector<bf16> ref(static_cast<std::size_t>(q_n)), got(static_cast<std::size_t>(q_n));
    best_us_per_phase(phase<product_walk>, a, blocks);
    cudaMemcpy(ref.data(), out, q_n * 2, cudaMemcpyDeviceToHost);
    cudaMemset(out, 0, q_n * 2);
    best_us_per_phase(phase<mma_walk>, a, blocks);
    cudaMemcpy(got.data(), out, q_n * 2, cudaMemcpyDeviceToHost);
    float diff = 0;
    for (long i = 0; i < q_n; ++i)
        diff = std::fmax(diff, std::fabs(__bfloat162float(got[i]) - __bfloat162float(ref[i])));
    std::printf("tensor-core walk against attention.cuh's, 128 rows x 16 heads at %d positions: max |diff| %.3g "
                "(outputs up to %.3g)\n", a.P, diff, max_abs(ref));

    a.iters = 4 * k_layers;
    probe_table(prop, blocks, names, a, [](auto c) { return phase<decltype(c)::value>; }, {16, 64, 96, 128});
    for (int R : {16, 64, 96, 128})
        std::printf("R=%d: %.1f MB of caches a phase (unique)\n", R, R * k_kv_heads * a.P * 512.0 / 1e6);
    return 0;
}

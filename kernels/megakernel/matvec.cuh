// matvec: Y[r, n] = sum_k W[n, k] * A[r, k] for a few activation rows r (1..256) and
// many weight rows n: the skinny matrix product every phase of the frame is made of.
// Weights stream from HBM once per phase with 16-byte loads; activations sit in
// shared memory as bf16; tensor cores do the arithmetic (mma.cuh), so a batch of 64
// costs the same weight bytes as a batch of 1.
//
// Contract (device, whole block): work is split in tiles of 16 * MT weight rows,
// handed out block-strided over the grid (or, when splittable and the grid has room, in
// halves of a tile's K, the two blocks of a cluster per tile: launched in clusters of 2; past 64
// activation rows and with ROW_GROUPS, unsplit one-slab products give each group of blocks a
// share of the rows and every tile: row_group_shift()); inside
// a block the 8 warps split K and their partial sums are added in a fixed order, and a split
// tile's two halves in part order (deterministic). A split product stages bf16 rows (an f32
// source stages through `red`, where the other part's sums land). The
// source fills shared memory with activation rows (optionally RMS-normalised), the
// epilogue receives each finished (weight row n, activation row r, value) exactly
// once, from one thread. Requires n_rows % (16 MT) == 0, K % k_slab == 0 and
// blockDim.x == k_threads (act_source maps a thread to four columns of a slab).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include "kernels/common/cp_async.cuh"
#include "kernels/common/grid_barrier.cuh"
#include "kernels/megakernel/device_model.h"
#include "kernels/megakernel/mma.cuh"

namespace megatts::mk {

inline constexpr int k_warps = 8;
inline constexpr int k_threads = k_warps * 32;
inline constexpr int k_slab = 1024;            // K elements staged in shared memory at once
inline constexpr int k_row_chunk = 64;         // activation rows staged at once
inline constexpr int k_warp_k = k_slab / k_warps;  // 128: two 64-wide chunks per warp per slab

// Shared-memory layouts without padding, swizzled instead, so that the whole buffer stays under
// 196 KB: above it the SM's L1 shrinks from 60 to 28 KB, and a frame at B = 1 (whose spills,
// attention and sampling read through L1) took 1-2% longer.
// A staged row's 16-byte piece c sits at piece c ^ 4 in odd rows: the MMA's 16-byte reads of rows
// g and g + 1 (one quarter-warp, pieces 4j .. 4j + 3) then fall in different banks.
__device__ __forceinline__ int act_at(int row, int k) { return row * k_slab + (k ^ ((row & 1) << 5)); }
// A partial-sum row's column c sits at c ^ 8 (row & 3): a warp's 8-byte stores of rows g = 0..3
// (the same columns) fall in different banks, where unswizzled all rows of a column pair shared
// one bank (eight-way conflicts at 64 activation rows); the reads of a row stay conflict-free.
__device__ __forceinline__ int red_at(int row, int col) { return row * k_row_chunk + (col ^ ((row & 3) << 3)); }

struct alignas(16) matvec_smem {
    bf16 act[k_row_chunk * k_slab];  // act_at()
    // Partial sums: [warp][tile row (<= 32)][activation row] (red_at); the staging of f32 rows
    // before that, and add_into's squares [tile row][activation row] after.
    float red[k_warps * 32 * k_row_chunk];
    float inv_rms[k_row_chunk];
    alignas(16) bf16 norm_tile[16];  // add_into with xs: the norm weights of the tile's 16 rows
    int row_map[k_row_chunk];
};
static_assert(sizeof(matvec_smem) <= 196 * 1024 - 2048, "the L1 keeps 60 KB (see act_at)");

// How many blocks share a tile's K: two when single 16-row tiles (MT == 1), at least two K
// slabs and twice the tiles fit the grid; then every multiprocessor streams weights (the
// 0.6B o- and down-projections have 64 tiles for 132 blocks). Part 0 takes the first
// ceil(slabs / 2) slabs, part 1 the rest; item u runs on block u, so a tile's parts are the two
// blocks of a cluster.
__device__ __forceinline__ int k_parts(int MT, bool splittable, int tiles, int slabs) {
    return splittable && MT == 1 && slabs >= 2 && 2 * tiles <= static_cast<int>(gridDim.x) ? 2 : 1;
}

// Split K runs a tile's two parts on the two blocks of a cluster: kernels with splittable
// products launch in clusters of k_split_cluster and call split_k_start() once as they begin.
inline constexpr int k_split_cluster = 2;
static_assert(k_split_cluster == 2, "k_parts() halves a tile's K: part p runs on cluster rank p");

// The programming model asks for a cluster barrier before a block's first access to another's
// shared memory, so that the other block is known to have started (compute-sanitizer's racecheck
// flags every split K write without it; the grid barriers before them say as much, but not to
// the tool).
__device__ __forceinline__ void split_k_start() { cooperative_groups::this_cluster().sync(); }

// Where part 0 of a split tile leaves its sums in part 1's shared memory (row chunk `chunk` of a
// product's at most k_max_activation_rows rows): rows 16-31 of warp `chunk`'s partial sums in
// `red`, which 16-row tiles never use.
static_assert(k_max_activation_rows <= k_warps * k_row_chunk, "an inbox per row chunk");
__device__ __forceinline__ float* split_inbox(matvec_smem& s, int chunk) {
    return s.red + (chunk * 32 + 16) * k_row_chunk;
}

// Row groups. Up to 64 rows (k_row_chunk) every block takes every row, and block b the items b,
// b + gridDim.x, ... Past 64 rows a product whose items are whole (one slab, not split; and
// not add_into, whose row sums are kept per 64-row chunk) splits its rows into 2 (or, past 128
// rows and on a grid of a multiple of 4 blocks, 4) groups of equal size, group b % groups
// taking block b: the blocks of a group run the product on their rows side by side, each staging
// (and preparing) them once for all its items, where 64-row chunks one after the other had every
// block stage every chunk and reload its weights for each (at 128 rows the QKV products' 128
// tiles took a block two stagings and two items; in groups, one staging and two items). Virtual
// item u = b, b + gridDim.x, ... < items * groups is item u / groups: each group covers every
// item once. A block's first item is then b / groups, not the b that preload() loaded: it loads
// it again (an L2 hit: block b / groups preloaded it). A row's sums are what they were: the same
// warps' K ranges added in the same order, whichever block holds the row, so a session's outputs
// do not depend on its batch (nor on which of the frame kernel's two instantiations ran it).
// Returns log2 of the groups.
__device__ __forceinline__ int row_group_shift(int R, bool groupable) {
    if (!groupable || R <= k_row_chunk) return 0;
    return R > 2 * k_row_chunk && gridDim.x % 4 == 0 ? 2 : 1;
}

// Work item u of a product: its tile and its slabs [first, end).
struct matvec_item {
    int tile, part, first, end;
};

__device__ __forceinline__ matvec_item item_of(int u, int parts, int slabs) {
    if (parts == 1) return {u, 0, 0, slabs};
    const int part = u % 2, half = (slabs + 1) / 2;
    return {u / 2, part, part ? half : 0, part ? slabs : half};
}

inline constexpr int k_stage_rows = 16;  // f32 activation rows staged in shared memory at once (in `red`)

// Activation rows, from an f32 matrix `x` (RMS-normalised over K with a bf16 weight when
// `norm` is set) or from a bf16 matrix `xb` that its producer already rounded as the MMA
// reads it (no norm); `rows` maps activation row r to a row of the matrix (identity when
// null). Rows are copied global -> shared with cp.async, every copy of a group in flight at
// once: bf16 rows straight into the MMA's buffer; f32 rows through two buffers of
// k_stage_rows / 2 rows in the reduction buffer, then normalised and rounded to bf16 by thread
// t for columns 4t..4t+3. A row's RMS is computed by one warp in a fixed lane order, or, with
// `row_ss`, from the sums of squares per 16 columns that the row's producer left
// (add_into) by four threads in a fixed order: a load or two per thread for every row at once,
// where a warp reads its rows one after the other (8 round trips at 64 rows). Either way the
// same for a row whatever the batch.
// A bf16 source with `row_ss` (and no `norm`) holds rows already multiplied by the norm's
// weight (add_into's `xs`): the RMS is per activation row, so it scales the finished sums
// (matvec's epilogue) instead of the staged rows, and the rows are staged as any bf16 rows
// are, their copies in flight while prepare() reads the row sums (without a map; with one, after
// it). At 64 rows that halves the bytes every block stages and drops the conversion pass
// (Nsight Compute at B = 64: the f32 rows' staging was 12% of the frame's stall samples).
struct act_source {
    const float* x;
    int ld;
    const bf16* norm;
    float eps;
    const int* rows;
    int K;
    const bf16* xb = nullptr;
    const float* row_ss = nullptr;  // [rows, k_row_ss_tiles], with x and norm, or with xb (scaled_after)

    __device__ __forceinline__ bool scaled_after() const { return xb && row_ss; }

    // Matrix row of activation row r0 + r (prepare() has run): without a map, computed, not
    // read from shared memory, where each copy's address waited on that read.
    __device__ __forceinline__ long row_at(const matvec_smem& s, int r0, int r) const {
        return rows ? s.row_map[r] : r0 + r;
    }

    __device__ void prepare(matvec_smem& s, int r0, int rc) const {
        static_assert(k_threads * 4 == k_slab, "a thread rounds four columns of a slab");
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (rows) {
            for (int r = threadIdx.x; r < rc; r += blockDim.x) s.row_map[r] = rows[r0 + r];
            __syncthreads();
        }
        if (!norm && !scaled_after()) return;
        if (row_ss) {
            // Four threads per row, K / 64 sums each, in a fixed order; the shuffles add the four
            // the same way in every lane. Another block wrote the sums: through L2 (__ldcg).
            static_assert(k_threads == 4 * k_row_chunk, "four threads per activation row");
            const int r = threadIdx.x / 4, quarter = threadIdx.x % 4, n = K / 64;
            float ss = 0.f;
            if (r < rc) {
                const float4* p =
                    reinterpret_cast<const float4*>(row_ss + row_at(s, r0, r) * k_row_ss_tiles + quarter * n);
#pragma unroll 8
                for (int i = 0; i < n / 4; ++i) {
                    const float4 v = __ldcg(p + i);
                    ss += v.x + v.y + v.z + v.w;
                }
            }
            ss += __shfl_xor_sync(0xffffffffu, ss, 1);
            ss += __shfl_xor_sync(0xffffffffu, ss, 2);
            if (r < rc && quarter == 0) s.inv_rms[r] = rsqrtf(ss / static_cast<float>(K) + eps);
            __syncthreads();
            return;
        }
        for (int r = warp; r < rc; r += k_warps) {
            const float* row = x + row_at(s, r0, r) * ld;
            float ss = 0.f;
            // Unrolled so the row's loads are in flight together: one latency, not eight.
#pragma unroll 8
            for (int k = lane * 4; k < K; k += 128) {
                float4 v = *reinterpret_cast<const float4*>(row + k);
                ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
            }
            for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
            if (lane == 0) s.inv_rms[r] = rsqrtf(ss / static_cast<float>(K) + eps);
        }
        __syncthreads();
    }

    // This thread's four norm weights of slab `slab` (columns 4t .. 4t + 3 as bf16 pairs; ones
    // without a norm), requested before prepare() reads the rows: loaded inside fill(), their
    // L2 round trip was one more link in every normalised phase's chain (Nsight Compute at
    // B = 64: 3% of the frame's stall samples waited on them).
    __device__ uint2 norm_weights(int slab) const {
        return norm ? __ldg(reinterpret_cast<const uint2*>(norm + slab * k_slab + 4 * threadIdx.x))
                    : uint2{0x3f803f80u, 0x3f803f80u};
    }

    // Stages slab `slab` of rows r0 .. r0 + rc - 1 as bf16 in s.act; `nw` is norm_weights(slab).
    // Whole block; bf16 rows may still be visible to their copying thread only (the caller syncs).
    // `wait = false` (bf16 rows only) leaves the copies in flight: the caller waits for them.
    __device__ void fill(matvec_smem& s, int r0, int rc, int slab, uint2 nw, bool wait = true) const {
        const int k0 = slab * k_slab;
        if (xb) {
            // Thread t copies 16-byte piece t % 128 of rows t / 128, t / 128 + 2, ...
            constexpr int per_row = k_slab / 8, rows_per_pass = k_threads / per_row;
            const int k = (threadIdx.x % per_row) * 8;
#pragma unroll 4
            for (int r = threadIdx.x / per_row; r < rc; r += rows_per_pass)
                cp_async::copy16(&s.act[act_at(r, k)], xb + row_at(s, r0, r) * ld + k0 + k);
            if (wait) cp_async::wait_all();
        } else {
            float* stage = s.red;  // [k_stage_rows][k_slab]
            const int k = 4 * threadIdx.x;
            const float w[4] = {__uint_as_float(nw.x << 16), __uint_as_float(nw.x & 0xffff0000u),
                                __uint_as_float(nw.y << 16), __uint_as_float(nw.y & 0xffff0000u)};
            // Two buffers of k_stage_rows / 2 rows: the next group's copies are in flight while
            // this thread converts the current one, one round trip per fill where a wait per 16
            // rows made four at 64 rows. Each thread reads back only what it copied (no block
            // barrier), and refills a buffer only after converting what it read from it.
            constexpr int group = k_stage_rows / 2;
            auto buffer = [&](int b) { return stage + (b / group % 2) * group * k_slab; };
            auto issue = [&](int b) {
                float* buf = buffer(b);
                const int n = min(group, rc - b);
#pragma unroll 4
                for (int r = 0; r < n; ++r)
                    cp_async::copy16(&buf[r * k_slab + k], x + row_at(s, r0, b + r) * ld + k0 + k);
                cp_async::commit();
            };
            issue(0);
            for (int b = 0; b < rc; b += group) {
                if (b + group < rc) {
                    issue(b + group);
                    cp_async::wait_groups<1>();
                } else {
                    cp_async::wait_groups<0>();
                }
                const float* buf = buffer(b);
                const int n = min(group, rc - b);
                for (int u = 0; u < n; ++u) {
                    float4 v = *reinterpret_cast<const float4*>(&buf[u * k_slab + k]);
                    if (norm) {
                        const float inv = s.inv_rms[b + u];
                        v.x = v.x * inv * w[0];
                        v.y = v.y * inv * w[1];
                        v.z = v.z * inv * w[2];
                        v.w = v.w * inv * w[3];
                    }
                    __nv_bfloat162* dst = reinterpret_cast<__nv_bfloat162*>(&s.act[act_at(b + u, k)]);
                    dst[0] = __floats2bfloat162_rn(v.x, v.y);
                    dst[1] = __floats2bfloat162_rn(v.z, v.w);
                }
            }
            __syncthreads();  // the stage becomes the reduction buffer
        }
        // Rows past rc are left as earlier phases left them: the MMA reads them, but an output
        // column depends on its own activation row only, and no column past rc is read (mma_slab).
        // Zeroing them (7 rows a slab at one row) was 2% of a B = 1 frame's stall samples.
    }
};

// One warp's weight fragments of one (tile, slab), for up to two 16-row m-tiles:
// [m-tile][64-chunk][row g lo, row g+8 lo, row g hi, row g+8 hi]. Registers, so that
// loads issued before a grid barrier are in flight while the block waits.
struct weight_frags {
    uint4 w[2][2][4];
};

// Loads this warp's fragments of (tile, slab) of W (tiles of 16 * MT rows, K columns).
template <int MT>
__device__ __forceinline__ void load_frags(weight_frags& f, const bf16* W, int K, int tile, int slab) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int kw = slab * k_slab + warp * k_warp_k;  // this warp's K range in W
#pragma unroll
    for (int m = 0; m < MT; ++m) {
        const bf16* row_lo = W + static_cast<long>(tile * 16 * MT + m * 16 + g) * K;
        const bf16* row_hi = row_lo + 8L * K;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const int k = kw + c * 64 + 8 * t;
            f.w[m][c][0] = load_weights(row_lo + k);
            f.w[m][c][1] = load_weights(row_hi + k);
            f.w[m][c][2] = load_weights(row_lo + k + 32);
            f.w[m][c][3] = load_weights(row_hi + k + 32);
        }
    }
}

// The block's first (tile, slab) of a later matvec over W, issued now: weights never
// depend on activations, so a caller issues this before the grid barrier that the
// matvec waits on, and passes preloaded = true.
// `splittable`: the matvec's too.
template <int MT>
__device__ __forceinline__ void preload(weight_frags& f, const bf16* W, int n_rows, int K, bool splittable = false) {
    const int tiles = n_rows / (16 * MT), parts = k_parts(MT, splittable, tiles, K / k_slab);
    if (static_cast<int>(blockIdx.x) >= tiles * parts) return;
    const matvec_item it = item_of(blockIdx.x, parts, K / k_slab);
    load_frags<MT>(f, W, K, it.tile, it.first);
}

// Asks the L2 for the weights of a later matvec over W (same n_rows, K, MT and splittable) that
// preload() does not load: the block's (tile, slab)s after its first. Weights of the first,
// loaded into registers anyway, are not asked for twice; every prefetch is more traffic in flight
// beside the phases' round trips (bench/probes/loaded_latency.cu).
template <int MT>
__device__ __forceinline__ void prefetch_rest(const bf16* W, int n_rows, int K, bool splittable = false) {
    const int tiles = n_rows / (16 * MT), slabs = K / k_slab, parts = k_parts(MT, splittable, tiles, slabs);
    constexpr int lines = k_slab * 2 / 128;  // 128-byte lines of a row's slab
    bool first = true;
    for (int u = blockIdx.x; u < tiles * parts; u += gridDim.x) {
        const matvec_item it = item_of(u, parts, slabs);
        for (int slab = it.first; slab < it.end; ++slab, first = false) {
            if (first) continue;
            for (int i = threadIdx.x; i < 16 * MT * lines; i += blockDim.x) {
                const bf16* p = W + static_cast<long>(it.tile * 16 * MT + i / lines) * K + slab * k_slab + i % lines * 64;
                asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
            }
        }
    }
}

// The MMAs of one staged slab: acc[m][n] += W fragments (f) x activation rows 8n..8n+7, for
// every n < NT, whether or not its rows were staged: an MMA's output column depends on its own
// activation row only, so the n-tiles past the staged rows leave garbage in accumulators that
// nothing reads (matvec reduces n < ntn), and the loop has no exit. With `if (n >= ntn)
// break`, each n-tile's fragment read sat behind a branch, and the MMAs waited for it one n-tile
// after the other (the SASS: shared-memory read, two dependent MMAs, branch, 32 times a slab).
template <int MT, int NT>
__device__ __forceinline__ void mma_slab(frag_c (&acc)[MT][8], const weight_frags& f, const bf16* act) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    auto& w = f.w;
#pragma unroll
    for (int c = 0; c < 2; ++c) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {  // which 32-wide half of the chunk
            // act_at(n * 8 + g, k): rows n * 8 + g and g have the same parity.
            const int ka = (warp * k_warp_k + c * 64 + 32 * half + 8 * t) ^ ((g & 1) << 5);
#pragma unroll
            for (int n = 0; n < NT; ++n) {
                // The B fragments of both MMA steps of this half (mma.cuh: 4 bf16 at 8t + 4q).
                const uint4 b = *reinterpret_cast<const uint4*>(&act[(n * 8 + g) * k_slab + ka]);
#pragma unroll
                for (int q = 0; q < 2; ++q)
#pragma unroll
                    for (int m = 0; m < MT; ++m) {
                        const uint4& lo = w[m][c][2 * half];
                        const uint4& hi = w[m][c][2 * half + 1];
                        // A fragment: rows (g, g+8) x logical k (2t..2t+1, 2t+8..2t+9).
                        const std::uint32_t g_first = q ? lo.z : lo.x, g_second = q ? lo.w : lo.y;
                        const std::uint32_t g8_first = q ? hi.z : hi.x, g8_second = q ? hi.w : hi.y;
                        mma_bf16(acc[m][n].v, g_first, g8_first, g_second, g8_second, q ? b.z : b.x,
                                 q ? b.w : b.y);
                    }
            }
        }
    }
}

// The epilogue that adds each product into rows of an f32 matrix (the residual stream):
// x[r * ld + n] += value. matvec issues the loads of all of a thread's elements before its
// first store; as a lambda's `x[i] += v`, each element's load waited for the store before it
// (the compiler cannot tell the elements apart), an L2 round trip per element, four in a row
// per thread at 64 activation rows. With `row_ss` (16-row tiles only) it also leaves what the
// next normalised product's act_source reads: per activation row and 16-row tile, the sum of
// the new x's squares over the tile, added in tile-row order.
// With `xs` (and row_ss), it also leaves the new x times the next norm's weight `norm_w`,
// rounded to bf16: the rows that product stages (act_source::scaled_after). matvec copies the
// tile's 16 weights into shared memory while it reduces the tile's sums: read from global memory
// here, each element's weight load waited for the stores before it (they might alias), a round
// trip per element (the o- and down-projections 1-2 us slower a phase at 64 rows).
struct add_into {
    float* x;
    int ld;
    float* row_ss = nullptr;  // [rows, k_row_ss_tiles]
    bf16* xs = nullptr;       // [rows, ld]
    const bf16* norm_w = nullptr;  // [ld], with xs
};

// add_into's order over a 16-row tile: e = col * 16 + row, two activation rows' 16 outputs a
// warp (two 64-byte runs of x to load and store, where e = row * rc + col gave each lane its
// own activation row); every e < 16 rc is an element. Its partial-sum reads meet 4-way bank
// conflicts.
__device__ __forceinline__ int add_row(int e) { return e % 16; }
__device__ __forceinline__ int add_col(int e) { return e / 16; }

// Element e of a tile's outputs (tile rows x chunk columns, a column per activation row), in
// blocks of 8 rows x 4 columns a warp: an activation row's outputs lie at r * ld + n, so a
// warp's stores are four runs of 8 consecutive n (four 32-byte sectors of f32), where e = row *
// rc + col gave each lane its own activation row (32 sectors a store at 32 rows and more).
// Elements run to tile_elements(); those whose column is rc or more are none (false). The
// partial sums' reads in shared memory (red_at) meet 2-way bank conflicts this way, where a
// row's columns were conflict-free.
__device__ __forceinline__ int tile_elements(int tile_rows, int rc) { return tile_rows * ((rc + 3) / 4 * 4); }
__device__ __forceinline__ bool tile_element(int e, int tile_rows, int rc, int& row, int& col) {
    const int q = e / 32, l = e % 32, groups = tile_rows / 8;
    row = q % groups * 8 + l % 8;
    col = q / groups * 4 + l / 8;
    return col < rc;
}

// Hands elements e = threadIdx.x, + k_threads, ... < count (at most Max per thread) to the
// epilogue: value(e, n, r, v) sets weight row n and activation row r, and the value v unless it
// returns false for an element that is none (tile_element).
template <int Max, class Epi, class Value>
__device__ __forceinline__ void emit(matvec_smem& s, int count, const Epi& epi, const Value& value) {
    if constexpr (std::is_same_v<Epi, add_into>) {
        float v[Max], old[Max];
        int at[Max];
#pragma unroll
        for (int j = 0; j < Max; ++j) {
            const int e = threadIdx.x + j * k_threads;
            if (e >= count) break;
            int n, r;
            value(e, n, r, v[j]);
            at[j] = r * epi.ld + n;
            old[j] = epi.x[at[j]];
        }
        if (epi.row_ss) __syncthreads();  // the squares go where value() may have read (s.red)
#pragma unroll
        for (int j = 0; j < Max; ++j) {
            if (threadIdx.x + j * k_threads >= count) break;
            const float x = old[j] + v[j];
            epi.x[at[j]] = x;
            if (epi.xs) epi.xs[at[j]] = __float2bfloat16(x * __bfloat162float(s.norm_tile[at[j] % epi.ld % 16]));
            // Activation rows r0 .. r0 + 63 of a chunk: r % k_row_chunk is the chunk's column.
            if (epi.row_ss) s.red[(at[j] % epi.ld % 16) * k_row_chunk + at[j] / epi.ld % k_row_chunk] = x * x;
        }
    } else {
        for (int e = threadIdx.x; e < count; e += k_threads) {
            int n, r;
            float v;
            if (value(e, n, r, v)) epi(n, r, v);
        }
    }
}

// The matvec over all tiles of W. ROW_GROUPS: past 64 rows, products that can split their rows
// into groups of blocks do (row_group_shift()); without, every product runs 64-row chunks one
// after the other. The frame kernel has an instantiation of each, since the groups' code cost
// the 0.6B kernel 132 bytes of spills and 3% of a one-session frame (bench/RESULTS.md,
// 2026-12-01). Epi: add_into, or void(int n, int r, float value); with
// PAIRED (gate/up interleaved in 8-row blocks) it is void(int n, int r, float gate, float up)
// for intermediate index n. `f` holds the block's first (tile, slab) when
// `preloaded` (preload() with the same W, n_rows, K, MT and splittable).
// `splittable`: two blocks may share a tile's K (k_parts); the sum of their partials, part 0's
// first, is what the epilogue gets: still the same bits every run.
template <int MT, bool PAIRED = false, bool ROW_GROUPS = false, class Epi>
__device__ __forceinline__ void matvec(matvec_smem& s, weight_frags& f, bool preloaded, const bf16* W, int n_rows,
                                       int K, int R, const act_source& src, const Epi& epi,
                                       bool splittable = false) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int tiles = n_rows / (16 * MT);
    const int slabs = K / k_slab;
    const int parts = PAIRED ? 1 : k_parts(MT, splittable, tiles, slabs);
    const int items = tiles * parts;
    // Each (tile, slab)'s loads are issued as soon as the registers are free: the first
    // before the activations are staged (or before the barrier, by preload()), the next
    // right after the MMAs that read the current ones, in flight while the block
    // reduces, runs the epilogue and stages the next slab.
    auto load_tile = [&](int tile, int slab) { load_frags<MT>(f, W, K, tile, slab); };
    const int shift = row_group_shift(R, ROW_GROUPS && !std::is_same_v<Epi, add_into> && parts == 1 && slabs == 1);
    const int group = blockIdx.x & ((1 << shift) - 1);
    const int r_end = (R * (group + 1)) >> shift, v_items = items << shift;
    for (int r0 = (R * group) >> shift; r0 < r_end; r0 += k_row_chunk) {
        const int rc = min(k_row_chunk, r_end - r0);
        const int ntn = (rc + 7) / 8;
        if (static_cast<int>(blockIdx.x) >= v_items) break;  // nothing to do in this phase
        if (r0 > 0 || !preloaded || shift > 0) {
            const matvec_item first = item_of(blockIdx.x >> shift, parts, slabs);
            load_tile(first.tile, first.first);
        }
        const uint2 first_norm = src.norm_weights(0);
        // bf16 rows without a map: their copies go out before prepare() reads the row sums.
        const bool early = slabs == 1 && src.xb && !src.rows;
        if (early) src.fill(s, r0, rc, 0, first_norm, false);
        src.prepare(s, r0, rc);
        if (slabs == 1) {
            if (early)
                cp_async::wait_all();
            else
                src.fill(s, r0, rc, 0, first_norm);
            __syncthreads();
        }
        // A scaled_after() source's RMS, applied to the finished sums of chunk column `col`.
        auto scaled = [&](float v, int col) { return src.scaled_after() ? v * s.inv_rms[col] : v; };
        for (int u = blockIdx.x; u < v_items; u += gridDim.x) {
            const matvec_item it = item_of(u >> shift, parts, slabs);
            const int tile = it.tile;
            frag_c acc[MT][8];
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int n = 0; n < 8; ++n) acc[m][n] = {{0.f, 0.f, 0.f, 0.f}};
            for (int slab = it.first; slab < it.end; ++slab) {
                if (slabs > 1) {
                    __syncthreads();
                    src.fill(s, r0, rc, slab, slab == 0 ? first_norm : src.norm_weights(slab));
                    __syncthreads();
                }
                // Up to 8 rows (every batch of up to 8 sessions) take a copy of the loop unrolled for
                // one n-tile: straight-line code, where the 8-tile copy jumps over seven unrolled
                // n-tiles at every step (the products' instruction-fetch stalls in Nsight Compute);
                // up to 32 rows (a prompt, 16 sessions) one unrolled for four.
                if (ntn == 1)
                    mma_slab<MT, 1>(acc, f, s.act);
                else if (ntn <= 4)
                    mma_slab<MT, 4>(acc, f, s.act);
                else
                    mma_slab<MT, 8>(acc, f, s.act);
                // The next slab of this item, or the first of the block's next item.
                if (slab + 1 < it.end) {
                    load_tile(tile, slab + 1);
                } else if (u + static_cast<int>(gridDim.x) < v_items) {
                    const matvec_item next = item_of((u + gridDim.x) >> shift, parts, slabs);
                    load_tile(next.tile, next.first);
                }
            }
            // add_into with xs: the tile's norm weights, copied while the sums are reduced (issued
            // at the item's start, the copy's registers spilled) by the block that runs the
            // epilogue; waited for before the barrier that publishes them.
            constexpr bool norm_tile = std::is_same_v<Epi, add_into>;
            auto norm_ready = [&] {
                if constexpr (norm_tile)
                    if (epi.xs) cp_async::wait_all();
            };
            if constexpr (norm_tile) {
                if (epi.xs && threadIdx.x < 2 && it.part == parts - 1)
                    cp_async::copy16(&s.norm_tile[8 * threadIdx.x], epi.norm_w + tile * 16 + 8 * threadIdx.x);
            }
            // Partial sums of the 8 warps, added in warp order: the same bits every run.
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int n = 0; n < 8; ++n) {
                    if (n >= ntn) break;
                    // Rows g and g + 8, activation rows 2t and 2t + 1 (frag_c).
                    // red_at(row, col): rows g and g + 8 of the tile share row & 3 = g & 3.
                    const int row = warp * 32 + m * 16 + g, col = (n * 8 + 2 * t) ^ ((g & 3) << 3);
                    *reinterpret_cast<float2*>(&s.red[row * k_row_chunk + col]) =
                        make_float2(acc[m][n].v[0], acc[m][n].v[1]);
                    *reinterpret_cast<float2*>(&s.red[(row + 8) * k_row_chunk + col]) =
                        make_float2(acc[m][n].v[2], acc[m][n].v[3]);
                }
            if (parts == 1) norm_ready();
            __syncthreads();
            auto warp_sum = [&](int row, int col) {
                float sum = 0.f;
#pragma unroll
                for (int w2 = 0; w2 < k_warps; ++w2) sum += s.red[red_at(row, col) + w2 * 32 * k_row_chunk];
                return sum;
            };
            // add_into with row sums: the tile's, once every element's square is in s.red.
            auto tile_squares = [&] {
                if constexpr (std::is_same_v<Epi, add_into>) {
                    if (!epi.row_ss) return;
                    __syncthreads();
                    for (int c = threadIdx.x; c < rc; c += blockDim.x) {
                        float ss = 0.f;
#pragma unroll
                        for (int i = 0; i < 16; ++i) ss += s.red[i * k_row_chunk + c];
                        epi.row_ss[(r0 + c) * k_row_ss_tiles + tile] = ss;
                    }
                }
            };
            if constexpr (PAIRED) {
                // m-tile m: gate rows 16m .. 16m + 7, up rows 16m + 8 .. 16m + 15.
                for (int e = threadIdx.x; e < tile_elements(8 * MT, rc); e += blockDim.x) {
                    int i, col;
                    if (!tile_element(e, 8 * MT, rc, i, col)) continue;
                    const int row = (i / 8) * 16 + i % 8;
                    epi(tile * 8 * MT + i, r0 + col, scaled(warp_sum(row, col), col),
                        scaled(warp_sum(row + 8, col), col));
                }
            } else if (parts == 1) {
                static_assert(MT == 1 || !std::is_same_v<Epi, add_into>, "add_into's row sums are per 16 rows");
                // add_into (16-row tiles) in add_row() and add_col()'s order: every element is one
                // (tile_element()'s, with elements that are none, spilled as much).
                constexpr bool adds = std::is_same_v<Epi, add_into>;
                emit<4 * MT>(s, adds ? 16 * rc : tile_elements(16 * MT, rc), epi, [&](int e, int& n, int& r, float& v) {
                    int row, col;
                    if constexpr (adds) {
                        row = add_row(e);
                        col = add_col(e);
                    } else if (!tile_element(e, 16 * MT, rc, row, col)) {
                        return false;
                    }
                    n = tile * 16 * MT + row;
                    r = r0 + col;
                    v = scaled(warp_sum(row, col), col);
                    return true;
                });
                tile_squares();
            } else {
                // Part 0 writes its sums into part 1's shared memory (split_inbox; the two are a
                // cluster), column by column ([col][16 rows], add_row() and add_col()'s order); the
                // cluster's barrier orders them before part 1 adds both, part 0's first, and runs
                // the epilogue. Through L2 (each part's sums stored, a ticket to say which came
                // second, the other's sums loaded) that took three round trips. (Letting the part
                // with more slabs, which finishes last, run the epilogue measured the same.) Each
                // row chunk has its own inbox: part 0 may go on to the next chunk before part 1 has
                // read this one.
                namespace cg = cooperative_groups;
                cg::cluster_group cluster = cg::this_cluster();
                float* const inbox = split_inbox(s, r0 / k_row_chunk);
                if (it.part == 0) {
                    float* const peer = cluster.map_shared_rank(inbox, 1);
                    for (int e = threadIdx.x; e < 16 * rc; e += blockDim.x) peer[e] = warp_sum(add_row(e), add_col(e));
                } else {
                    norm_ready();
                }
                cluster.sync();
                if (it.part == 1) {
                    emit<4>(s, 16 * rc, epi, [&](int e, int& n, int& r, float& v) {
                        n = tile * 16 + add_row(e);
                        r = r0 + add_col(e);
                        v = scaled(inbox[e] + warp_sum(add_row(e), add_col(e)), add_col(e));
                        return true;
                    });
                    tile_squares();
                }
            }
            __syncthreads();
        }
    }
}

}  // namespace megatts::mk

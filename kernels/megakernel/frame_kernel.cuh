// frame_kernel: one persistent launch that advances every session of a launch by one
// audio frame: the talker over the launch's rows (a prompt for a new session, one
// position for a running one), the codec head and codebook-0 sampling, the 15
// code-predictor passes with their heads and sampling, and the sum of the 16 code
// embeddings plus the frame's text-track vector that becomes the next talker input.
// No host round trip inside a frame; the codes land in mapped pinned host memory and
// a sequence number written last tells the host they are complete.
//
// Contract: launched with one block of k_threads per SM in clusters of k_split_cluster
// (all co-resident; the host checks occupancy; matvec's split K needs the clusters), the barrier counter
// zeroed, and frame_params as a __grid_constant__ parameter (the launch_desc inside it is
// read in place, never copied to local memory).
// Phases are separated by grid_sync counters; within a phase every output element
// has exactly one writer and every reduction a fixed order, so a launch is
// bit-for-bit repeatable. Sessions that sample EOS get codes {eos, -1, ...} and keep
// their next input unchanged.
#pragma once

#include <cstdint>

#include "kernels/megakernel/attention.cuh"
#include "kernels/megakernel/device_model.h"
#include "kernels/megakernel/grid_sync.cuh"
#include "kernels/megakernel/matvec.cuh"
#include "kernels/megakernel/phase_log.h"
#include "kernels/megakernel/sampling.cuh"

namespace megatts::mk {

// Fixed ids of the official generate(): the talker may emit audio codes or EOS only.
struct codec_ids {
    int eos;
    int suppress_begin;  // first control id (= code-predictor vocab)
    int suppress_end;    // codec vocab
};

struct frame_params {
    model_weights w;
    state_pools pools;
    scratch scr;
    launch_desc desc;  // a kernel parameter: read through the constant cache, which grid barriers leave warm
    rope_table rope;
    codec_ids ids;
    std::uint32_t sequence;  // written to host_flag when the frame is complete
    int talker_only;         // benchmark: stop after codebook 0 (codes 1..15 are -1)
};

static_assert(k_threads == k_sampling_threads, "sampling runs on the kernel's blocks");

static_assert(sizeof(attention_smem) <= sizeof(matvec_smem), "the attention's ring must not grow the kernel's shared memory");

union kernel_smem {
    matvec_smem mv;
    sampling_smem sp;
    attention_smem at;
};

// Which session and KV position an activation row of a stack pass belongs to.
struct row_slot {
    int session;
    int position;
};

// RowGroups: whether the frame's products split rows past 64 into groups of blocks (matvec.cuh's
// ROW_GROUPS; megakernel.cu launches the instantiation with them for launches of more than 64
// talker rows).
template <class S, bool RowGroups>
class frame_runner {
public:
    __device__ frame_runner(const frame_params& p, kernel_smem& s) : p_(p), s_(s), d_(p.desc) {}

    __device__ __forceinline__ void run() {
        mark(phase_kind::start);
        __shared__ rope_table rope;  // written before the first barrier, read after it
        for (int i = threadIdx.x; i < k_head_dim / 2; i += blockDim.x) rope.inv_freq[i] = p_.rope.inv_freq[i];
        rope_ = &rope;
        split_k_start();
        load_inputs();
        for (int l = 0; l < S::layers; ++l) talker_layer(l);
        talker_head();
        sample_codebook0();
        if (!p_.talker_only) {
            for (int pass = 0; pass < S::cp_passes; ++pass) code_predictor_pass(pass);
            next_input();
        }
        publish();
    }

private:
    __device__ void sync(phase_kind kind) {
        sync(kind, [] {});
    }

    // Ends a phase; `before_wait` issues loads of later phases' weights between this block's
    // arrival and its wait (grid_sync.cuh), so they stream while the grid catches up.
    template <class F>
    __device__ __forceinline__ void sync(phase_kind kind, const F& before_wait) {
        log_work();
        arrive(p_.scr.barrier);
        before_wait();
        wait(p_.scr.barrier, ++phase_);
        mark(kind);
    }

    // When the host asked for a phase log: every block notes when it starts a phase, and
    // block 0 stamps the end of each barrier.
    __device__ void mark(phase_kind kind) {
        if (!p_.scr.phases.marks || threadIdx.x != 0) return;
        started_ = clock64();
        if (blockIdx.x != 0 || phase_ >= k_max_phase_marks) return;
        unsigned long long ns;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
        p_.scr.phases.marks[phase_] = {started_, ns, static_cast<int>(kind), 0};
    }

    // This block's cycles on the phase now ending, once all its threads are done with it.
    __device__ void log_work() {
        if (!p_.scr.phases.work || phase_ >= k_max_phase_marks) return;
        __syncthreads();
        if (threadIdx.x == 0)
            p_.scr.phases.work[phase_ * gridDim.x + blockIdx.x] = static_cast<unsigned int>(clock64() - started_);
    }

    __device__ int warp_id() const { return (blockIdx.x * blockDim.x + threadIdx.x) / 32; }
    __device__ int warps() const { return gridDim.x * blockDim.x / 32; }

    __device__ __forceinline__ void load_inputs() {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d_.n_rows * S::hidden; i += gridDim.x * blockDim.x) {
            const int r = i / S::hidden, k = i % S::hidden;
            p_.scr.x[i] = d_.rows[r].input[k];
        }
        sync(phase_kind::inputs, [&] { preload<2>(frags_, p_.w.talker[0].qkv, S::qkv_width, S::hidden); });
    }

    // One decoder layer over R activation rows of a stack (talker or code predictor).
    // `one_row` (every session has one row here) lets each attention warp append its
    // own key and value, saving the phase that otherwise stores all rows' first.
    // `next` is the matvec after this layer (tiles of 16 * next_mt rows, K = Hidden), the next
    // layer's QKV or the stack's head, `next_norm` the RMSNorm before it (the next layer's input
    // norm or the stack's final norm, whose weights are prefetched into L2): its first tile is
    // preloaded before the layer's last barrier. Every matvec's first tile is in frags_ when it
    // starts (preload() before the barrier it waits on), this layer's QKV included; the block's
    // later tiles of gate/up and the down-projection's later slabs are asked of the L2 one
    // barrier ahead (prefetch_rest()), and nothing else. At 0.6B those are the only products with
    // more than one item or slab a block; at 1.7B QKV's and the o-projection's second slab are
    // left to their loads (a prefetch_rest() beside every preload() spilled the 0.6B kernel).
    // Weight traffic in flight lengthens every L2 round trip of the phases it overlaps, the
    // latency-bound attention's most (prefetching all of gate/up and the down-projection during
    // the attention's barrier, and the next QKV during the o-projection's, cost more than it
    // saved: bench/RESULTS.md, 2026-11-28). The products that add into x leave the next
    // normalised product's rows, x times its norm's weight in bf16, and their row sums
    // (add_into): the o-projection for gate/up, the down-projection for the next layer's QKV or
    // the head, which apply the RMS to their sums; a stack's first layer reads its f32 rows for
    // their RMS. At every batch size alike: a row's RMS must not depend on
    // how many rows share the launch (a session's sums are the same alone or in any batch, but
    // for the talker's attention, whose walk a launch of up to 8 rows splits over idle blocks
    // once the cache is long: the same within float tolerance, not the same bits).
    template <int Hidden, int Inter, class RowOf, class KvOf>
    __device__ __forceinline__ void decoder_layer(const layer_weights& L, float* x, int R, bool one_row, bool first,
                                                  const bf16* next, int next_rows, int next_mt, const bf16* next_norm,
                                                  bool cp,
                                                  const RowOf& row_of, const KvOf& kv_of) {
        const float eps = p_.w.rms_eps;
        float* qkv = p_.scr.qkv;
        float* const row_ss = p_.scr.row_ss;
        bf16* const xs = p_.scr.xs;
        // Member by member, not a choice of two whole sources: that took the spills from 40 to 72 bytes.
        const act_source in{first ? x : nullptr, Hidden, first ? L.in_norm : nullptr, eps, nullptr, Hidden,
                            first ? nullptr : xs, first ? nullptr : row_ss};
        // 32-row tiles: 128 of them, one round on a 132-SM grid.
        matvec<2, false, RowGroups>(s_.mv, frags_, true, L.qkv, S::qkv_width, Hidden, R, in,
                                    [&](int n, int r, float v) { qkv[r * S::qkv_width + n] = v; });
        // The QK norms' weights are loaded while the grid catches up: loaded after the barrier,
        // they missed in L2 (a layer's are read once a frame, or once a code-predictor pass, with
        // every layer's weights streamed in between) and were the first link of every attention
        // pair's chain (Nsight Compute at B = 1: 7% of the frame's samples waited on them).
        head_norm q_norm, k_norm;
        sync(layer_phase(cp, 0), [&] {
            q_norm = load_head_norm(L.q_norm);
            k_norm = load_head_norm(L.k_norm);
            prefetch_vector(L.post_norm, Hidden * 2);  // the o-projection's add_into norm tile
        });
        constexpr int group = S::heads / S::kv_heads;
        // Row r's key head kvh: where its session's cache of that head lives (addresses only),
        // and the key and value as the cache holds them (loads and arithmetic).
        auto cache_head = [&](int r, int kvh, bf16*& kd, bf16*& vd, long& stride) {
            const row_slot rs = row_of(r);
            kv_of(rs, kd, vd, stride);
            kd += kvh * k_head_dim;
            vd += kvh * k_head_dim;
            return rs;
        };
        auto current_head = [&](int r, int kvh, int position, float (&k)[4], float (&v)[4]) {
            const float* src = qkv + r * S::qkv_width + S::q_width + kvh * k_head_dim;
            current_kv(src, src + S::kv_width, k_norm, eps, position, *rope_, k, v);
        };
        if (!one_row) {
            for (int u = warp_id(); u < R * S::kv_heads; u += warps()) {
                const int r = u / S::kv_heads, kvh = u % S::kv_heads;
                float k[4], v[4];
                bf16 *kd, *vd;
                long stride;
                const row_slot rs = cache_head(r, kvh, kd, vd, stride);
                current_head(r, kvh, rs.position, k, v);
                store_kv(k, v, kd + rs.position * stride, vd + rs.position * stride);
            }
            sync(layer_phase(cp, 1));
        }
        // A (row, head) pair's walk goes to a team of warps, as wide as leaves every pair one
        // team in one round (8 warps up to one pair a block, 1 from five): a narrow team runs
        // the walk's 8 walkers' groups one after the other in its warps, but no pair waits
        // for another's walk, barrier and merge (at 64 rows a block walked 8 pairs one after
        // the other); each warp keeps k_walk_depth groups of its walk in flight through shared
        // memory. Where the pairs leave blocks idle (the talker up to 8 rows) and its cache is
        // long (past k_attention_split_positions), each pair's walk is split over up to
        // k_max_attention_parts blocks, k_attention_part_positions or more positions each.
        const int pairs = R * S::heads, grid = static_cast<int>(gridDim.x);
        int parts = 1;
        if (!cp && pairs <= grid && d_.max_position > k_attention_split_positions) {
            const int by_length = (d_.max_position + k_attention_part_positions - 1) / k_attention_part_positions;
            parts = max(1, min(min(grid / pairs, k_max_attention_parts), by_length));
        }
        const int per_block = (pairs * parts + grid - 1) / grid;
        const int width = per_block <= 1 ? 8 : per_block == 2 ? 4 : per_block <= 4 ? 2 : 1;
        const int teams = k_attn_warps / width, team = threadIdx.x / 32 / width, t = threadIdx.x / 32 % width;
        const float scale = rsqrtf(static_cast<float>(k_head_dim));
        // Every block runs the same rounds (block barriers inside), whether its teams have pairs.
        for (int round = 0; round < pairs * parts; round += grid * teams) {
            const int u = round + blockIdx.x * teams + team;
            const bool active = u < pairs * parts;
            attention_task a{};
            if (active) {
                const int pair = u / parts, part = u % parts;
                const int r = pair / S::heads, h = pair % S::heads;
                // Everything the pair reads goes out first, before any arithmetic or store: the
                // query, this warp's first cache positions, then the key and value.
                float q[4];
                load_head(qkv + r * S::qkv_width + h * k_head_dim, q);
                bf16 *kd, *vd;
                long stride;
                const row_slot rs = cache_head(r, h / group, kd, vd, stride);
                const int chunk = (rs.position + parts - 1) / parts;
                const int lo = min(rs.position, part * chunk), hi = min(rs.position, lo + chunk);
                a = {kd, vd, stride, lo, hi, part, parts,
                     p_.scr.attention.partials + static_cast<long>(pair) * parts * part_partials::stride,
                     p_.scr.attention.tickets + pair, p_.scr.ctx + r * S::q_width + h * k_head_dim};
                walk_cursor cursor = start_walk(s_.at.ring[threadIdx.x / 32], t, width, a);
                float k[4], v[4];
                current_head(r, h / group, rs.position, k, v);
                const bool seeds = part == 0 && t == 0;  // this warp runs walker 0 of part 0
                if (one_row && seeds && h % group == 0)
                    store_kv(k, v, kd + rs.position * stride, vd + rs.position * stride);
                const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
                norm_rope(q, q_norm, eps, rs.position, *rope_);
                float d = 0.f;
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    s_.at.q[warp][lane + 32 * i] = q[i];
                    d += q[i] * k[i];
                }
                float d_cur = 0.f;
                if (seeds) {
                    d_cur = warp_sum(d) * scale;
#pragma unroll
                    for (int i = 0; i < 4; ++i) s_.at.current[warp][lane + 32 * i] = v[i];
                }
                __syncwarp();
                walk(s_.at, team, t, width, a, scale, cursor, d_cur);
            }
            __syncthreads();
            if (active && t == 0) finish_walk(s_.at, team, a);
            __syncthreads();  // the next round reuses the team's shared memory
        }
        sync(layer_phase(cp, 2), [&] {
            preload<1>(frags_, L.o, Hidden, S::q_width, true);
        });
        act_source ctx{nullptr, S::q_width, nullptr, eps, nullptr, S::q_width, p_.scr.ctx};
        matvec<1, false, RowGroups>(s_.mv, frags_, true, L.o, Hidden, S::q_width, R, ctx,
                                    add_into{x, Hidden, row_ss, xs, L.post_norm}, true);
        sync(layer_phase(cp, 3), [&] {
            preload<1>(frags_, L.gate_up, 2 * Inter, Hidden);
            prefetch_vector(next_norm, Hidden * 2);  // the down-projection's add_into norm tile
            prefetch_rest<1>(L.gate_up, 2 * Inter, Hidden);
        });
        bf16* act = p_.scr.act;
        const act_source post{nullptr, Hidden, nullptr, eps, nullptr, Hidden, xs, row_ss};
        // 16-row tiles of 8 gate and 8 up rows: 2 * Inter / 16 of them (384 for the 0.6B) spread
        // over the grid more evenly than 32-row tiles (192 on 132 blocks: 60 blocks did two, and
        // the phase took as long as two), and a block's tiles share one staging of the rows.
        matvec<1, true, RowGroups>(s_.mv, frags_, true, L.gate_up, 2 * Inter, Hidden, R, post,
                                   [&](int n, int r, float g, float u) {
                                       act[r * Inter + n] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
                                   });
        sync(layer_phase(cp, 4), [&] {
            preload<1>(frags_, L.down, Hidden, Inter, true);
            prefetch_rest<1>(L.down, Hidden, Inter, true);
        });
        act_source mid{nullptr, Inter, nullptr, eps, nullptr, Inter, act};
        const add_into residual{x, Hidden, row_ss, xs, next_norm};
        matvec<1, false, RowGroups>(s_.mv, frags_, true, L.down, Hidden, Inter, R, mid, residual, true);
        sync(layer_phase(cp, 5), [&] {
            if (next_mt == 1)
                preload<1>(frags_, next, next_rows, Hidden);
            else
                preload<2>(frags_, next, next_rows, Hidden);
        });
    }

    __device__ __forceinline__ void talker_layer(int l) {
        auto row_of = [&](int r) { return row_slot{d_.rows[r].session, d_.rows[r].position}; };
        auto kv_of = [&](const row_slot& rs, bf16*& k, bf16*& v, long& stride) {
            const long base = (static_cast<long>(d_.sessions[rs.session].slot) * S::layers + l) *
                              p_.pools.max_positions * S::kv_width;
            k = p_.pools.k_cache + base;
            v = p_.pools.v_cache + base;
            stride = S::kv_width;
        };
        const bool last = l + 1 == S::layers;
        decoder_layer<S::hidden, S::intermediate>(
            p_.w.talker[l], p_.scr.x, d_.n_rows, d_.n_rows == d_.n_sessions, l == 0,
            last ? p_.w.codec_head : p_.w.talker[l + 1].qkv, last ? S::codec_vocab : S::qkv_width, 2,
            last ? p_.w.talker_norm : p_.w.talker[l + 1].in_norm, false, row_of, kv_of);
    }

    __device__ __forceinline__ void talker_head() {
        __shared__ int last_rows[k_max_sessions_per_launch];
        for (int s = threadIdx.x; s < d_.n_sessions; s += blockDim.x)
            last_rows[s] = d_.sessions[s].first_row + d_.sessions[s].rows - 1;
        __syncthreads();
        // The last layer's down-projection left the rows times the final norm's weight (xs) and
        // their sums of squares; each session's last row is staged from those.
        const act_source h{nullptr, S::hidden, nullptr, p_.w.rms_eps, last_rows, S::hidden, p_.scr.xs, p_.scr.row_ss};
        float* logits = p_.scr.logits;
        matvec<2, false, RowGroups>(s_.mv, frags_, true, p_.w.codec_head, S::codec_vocab, S::hidden, d_.n_sessions, h,
                                    [&](int n, int s, float v) { logits[s * S::codec_vocab + n] = v; });
        sync(phase_kind::talker_head);
    }

    // f32 RMSNorm of one row into out (the code predictor's position-0 input).
    __device__ void norm_row(const float* x, const bf16* w, float* out) {
        __shared__ float partial[k_warps];
        float ss = 0.f;
        for (int k = threadIdx.x; k < S::hidden; k += blockDim.x) ss += x[k] * x[k];
        ss = warp_sum(ss);
        if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
        __syncthreads();
        float total = 0.f;
        for (int i = 0; i < k_warps; ++i) total += partial[i];
        const float inv = rsqrtf(total / S::hidden + p_.w.rms_eps);
        for (int k = threadIdx.x; k < S::hidden; k += blockDim.x) out[k] = x[k] * inv * __bfloat162float(w[k]);
        __syncthreads();
    }

    // Four columns a thread, every load issued before the first store: a loop of one load and
    // one store per column waited for each load in turn (the compiler cannot move a load above
    // a store that may alias it), four round trips to a table row that is rarely in L2.
    __device__ void embedding_row(const bf16* table, int id, float* out) {
        static_assert(S::hidden % (4 * k_threads) == 0, "a thread converts four columns per step");
        constexpr int steps = S::hidden / (4 * k_threads);
        const uint2* row = reinterpret_cast<const uint2*>(table + static_cast<long>(id) * S::hidden);
        uint2 v[steps];
#pragma unroll
        for (int i = 0; i < steps; ++i) v[i] = __ldg(row + threadIdx.x + i * k_threads);
#pragma unroll
        for (int i = 0; i < steps; ++i)
            reinterpret_cast<float4*>(out)[threadIdx.x + i * k_threads] =
                make_float4(__uint_as_float(v[i].x << 16), __uint_as_float(v[i].x & 0xffff0000u),
                            __uint_as_float(v[i].y << 16), __uint_as_float(v[i].y & 0xffff0000u));
    }

    // Block per session: c0, the talker hidden, and the code predictor's first two inputs.
    __device__ void sample_codebook0() {
        for (int s = blockIdx.x; s < d_.n_sessions; s += gridDim.x) {
            const session_desc& sd = d_.sessions[s];
            const int last = sd.first_row + sd.rows - 1;
            float* hidden = p_.scr.hidden + s * S::hidden;
            norm_row(p_.scr.x + last * S::hidden, p_.w.talker_norm, hidden);
            std::int32_t* history = p_.pools.history + static_cast<long>(sd.slot) * p_.pools.max_positions;
            talker_processors_desc proc{history, sd.frame, sd.repetition_penalty, sd.min_new_tokens,
                                        p_.ids.eos, p_.ids.suppress_begin, p_.ids.suppress_end};
            int c0 = sample_token(s_.sp, p_.scr.logits + s * S::codec_vocab, S::codec_vocab, sd.talker, &proc,
                                  sampling_uniform(sd.seed, sd.frame, 0));
            if (sd.forced_codes) c0 = sd.forced_codes[0];
            if (threadIdx.x == 0) {
                p_.scr.codes[s * S::groups] = c0;
                if (c0 != p_.ids.eos) history[sd.frame] = c0;
            }
            // Position 0: the hidden state; position 1: the TALKER's embedding of c0.
            float* e0 = p_.scr.cp_embed + (2 * s) * S::hidden;
            for (int k = threadIdx.x; k < S::hidden; k += blockDim.x) e0[k] = hidden[k];
            embedding_row(p_.w.codec_embedding, c0 == p_.ids.eos ? 0 : c0, e0 + S::hidden);
            __syncthreads();
        }
        sync(phase_kind::sample_codebook0);
    }

    __device__ __forceinline__ void code_predictor_pass(int pass) {
        const int per = pass == 0 ? 2 : 1;  // pass 0 runs positions 0 and 1 together
        const int R = d_.n_sessions * per;
        float* x = p_.scr.x;  // the talker's residual rows are free once its hidden is taken
        // The input rows, from cp_embed: through the projection (1.7B), or copied (0.6B) for
        // pass 0 only; a later pass's rows were written into x by the previous pass's sampling.
        if constexpr (S::cp_projection) {
            act_source e{p_.scr.cp_embed, S::hidden, nullptr, p_.w.rms_eps, nullptr, S::hidden};
            const bf16* bias = p_.w.cp_projection_bias;
            matvec<1, false, RowGroups>(s_.mv, frags_, false, p_.w.cp_projection, S::cp_hidden, S::hidden, R, e,
                                        [&](int n, int r, float v) {
                                            x[r * S::cp_hidden + n] = v + __bfloat162float(bias[n]);
                                        });
        } else if (pass == 0) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < R * S::cp_hidden; i += gridDim.x * blockDim.x)
                x[i] = p_.scr.cp_embed[i];
        }
        if (S::cp_projection || pass == 0)
            sync(phase_kind::cp_input, [&] { preload<2>(frags_, p_.w.cp[0].qkv, S::qkv_width, S::cp_hidden); });
        auto row_of = [&](int r) {
            return pass == 0 ? row_slot{r / 2, r % 2} : row_slot{r, pass + 1};
        };
        for (int l = 0; l < S::cp_layers; ++l) {
            auto kv_of = [&](const row_slot& rs, bf16*& k, bf16*& v, long& stride) {
                const long base = (static_cast<long>(d_.sessions[rs.session].slot) * S::cp_layers + l) *
                                  S::cp_positions * S::kv_width;
                k = p_.pools.cp_k + base;
                v = p_.pools.cp_v + base;
                stride = S::kv_width;
            };
            const bool last = l + 1 == S::cp_layers;
            const bf16* head = p_.w.cp_heads + static_cast<long>(pass) * S::cp_vocab * S::cp_hidden;
            // The head in 16-row tiles: 128 of them, where 32-row tiles left half the grid idle.
            decoder_layer<S::cp_hidden, S::cp_intermediate>(
                p_.w.cp[l], x, R, pass > 0, l == 0, last ? head : p_.w.cp[l + 1].qkv,
                last ? S::cp_vocab : S::qkv_width, last ? 1 : 2, last ? p_.w.cp_norm : p_.w.cp[l + 1].in_norm, true,
                row_of, kv_of);
        }
        __shared__ int last_rows[k_max_sessions_per_launch];
        for (int s = threadIdx.x; s < d_.n_sessions; s += blockDim.x) last_rows[s] = s * per + per - 1;
        __syncthreads();
        const act_source h{nullptr, S::cp_hidden, nullptr, p_.w.rms_eps, last_rows, S::cp_hidden, p_.scr.xs,
                           p_.scr.row_ss};
        float* logits = p_.scr.cp_logits;
        const bf16* head = p_.w.cp_heads + static_cast<long>(pass) * S::cp_vocab * S::cp_hidden;
        matvec<1, false, RowGroups>(s_.mv, frags_, true, head, S::cp_vocab, S::cp_hidden, d_.n_sessions, h,
                                    [&](int n, int s, float v) {
                                        logits[(s * S::cp_passes + pass) * S::cp_vocab + n] = v;
                                    });
        sync(phase_kind::cp_head);
        for (int s = blockIdx.x; s < d_.n_sessions; s += gridDim.x) {
            const session_desc& sd = d_.sessions[s];
            int code = sample_token(s_.sp, logits + (s * S::cp_passes + pass) * S::cp_vocab, S::cp_vocab, sd.cp,
                                    nullptr, sampling_uniform(sd.seed, sd.frame, pass + 1));
            if (sd.forced_codes) code = sd.forced_codes[pass + 1];
            if (threadIdx.x == 0) p_.scr.codes[s * S::groups + pass + 1] = code;
            // The next pass's input row: straight into x when no projection follows (nothing
            // reads x in this phase: the heads read it in the one before).
            const bf16* table = p_.w.cp_embeddings + static_cast<long>(pass) * S::cp_vocab * S::hidden;
            embedding_row(table, code, S::cp_projection ? p_.scr.cp_embed + s * S::hidden : x + s * S::cp_hidden);
            __syncthreads();
        }
        const bool feeds_next = !S::cp_projection && pass + 1 < S::cp_passes;
        sync(phase_kind::cp_sample, [&] {
            if (feeds_next) preload<2>(frags_, p_.w.cp[0].qkv, S::qkv_width, S::cp_hidden);
        });
    }

    // Block per session: C(c0) + sum of the 15 code-predictor embeddings + text track,
    // in the reference's order.
    __device__ void next_input() {
        for (int s = blockIdx.x; s < d_.n_sessions; s += gridDim.x) {
            const session_desc& sd = d_.sessions[s];
            const std::int32_t* codes = p_.scr.codes + s * S::groups;
            if (codes[0] == p_.ids.eos) continue;
            float* out = p_.pools.next_input + static_cast<long>(sd.slot) * S::hidden;
            for (int k = threadIdx.x; k < S::hidden; k += blockDim.x) {
                float v = __bfloat162float(p_.w.codec_embedding[static_cast<long>(codes[0]) * S::hidden + k]);
                for (int j = 0; j < S::cp_passes; ++j)
                    v += __bfloat162float(
                        p_.w.cp_embeddings[(static_cast<long>(j) * S::cp_vocab + codes[j + 1]) * S::hidden + k]);
                out[k] = v + sd.text_track[k];
            }
        }
        sync(phase_kind::next_input);
    }

    __device__ void publish() {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d_.n_sessions * S::groups;
             i += gridDim.x * blockDim.x) {
            const int s = i / S::groups;
            const bool eos = p_.scr.codes[s * S::groups] == p_.ids.eos;
            p_.scr.host_codes[i] = (eos || p_.talker_only) && i % S::groups ? -1 : p_.scr.codes[i];
        }
        __threadfence_system();
        sync(phase_kind::publish);
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            *p_.scr.host_flag = p_.sequence;
            __threadfence_system();
        }
    }

    const frame_params& p_;
    kernel_smem& s_;
    const launch_desc& d_;
    const rope_table* rope_ = nullptr;  // this block's shared-memory copy of p_.rope
    unsigned int phase_ = 0;
    unsigned long long started_ = 0;  // thread 0, with a phase log: SM clock when this phase began
    weight_frags frags_;  // the next matvec's first tile, loaded before the barrier it waits on
};

}  // namespace megatts::mk

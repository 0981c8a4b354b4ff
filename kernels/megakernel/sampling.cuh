// sampling: the on-device token choice of one session, one block: the talker's
// processors (repetition penalty, min-new-tokens EOS mask, suppression), then
// arg-max or temperature / top-k / top-p / draw, with the exact arithmetic of
// kernels/reference/sampler.cpp: the same candidate set (every finite score at least
// the k-th best), the same order (score descending, id ascending), the same
// sequential sums of sampling_exp() and the same Philox draw. Identical logits and
// counters therefore give identical tokens on the CPU and the GPU.
//
// Contract (device, whole block of k_sampling_threads threads): top_k in 1..k_max_top_k
// unless greedy (the host refuses other values). When more than k_max_candidates scores
// tie at the threshold, the same subset is kept every run (the CPU keeps all; such ties
// do not occur with real logits).
#pragma once

#include <cstdint>

#include "kernels/common/cp_async.cuh"
#include "kernels/common/sampling_math.h"
#include "kernels/megakernel/device_model.h"

namespace megatts::mk {

inline constexpr int k_max_vocab = 3072;
inline constexpr int k_sampling_threads = 256;  // the block size sample_token() is written for
inline constexpr int k_max_candidates = 256;
// The threshold search stops once at most this many keys are at or above it; the ranking
// then sorts them all, four threads a candidate (at 128, two threads with twice the comparisons
// each; this and the copy below took 0.3 us off a code-predictor draw, bench/RESULTS.md 2026-11-29).
inline constexpr int k_ranked = 64;
static_assert(k_ranked >= k_max_top_k && k_ranked <= k_max_candidates, "the ranked keys hold the top_k");

struct talker_processors_desc {
    const std::int32_t* history;  // codebook 0 of earlier frames
    int history_len;              // = frames emitted so far
    float repetition_penalty;
    int min_new_tokens;
    int eos;
    int suppress_begin, suppress_end;
};

struct alignas(16) sampling_smem {
    float score[k_max_vocab];  // 16-byte aligned: sample_token() copies the logits in 16 bytes at a time
    unsigned char seen[k_max_vocab];
    float cand_score[k_max_candidates];
    int cand_id[k_max_candidates];
    float sorted_score[k_max_candidates];
    int sorted_id[k_max_candidates];
    float weight[k_max_candidates];  // sampling_exp(sorted_score[i] - best), computed in parallel
    float prefix[k_max_candidates];  // weight[0] + ... + weight[i], added in that order
    float target;
    int warp_count[2][32];  // per-warp counts of the threshold search, double-buffered by step
    int warp_total[32];     // per-warp candidate counts
    int keep;
    float best_v[32];
    int best_i[32];
    int n_cand;
    int token;
};

__device__ __forceinline__ unsigned int order_key(float f) {
    const unsigned int u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Lowest index among the maxima (the reference's arg_max).
__device__ inline int block_argmax(sampling_smem& s, int n) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (s.score[i] > bv || (s.score[i] == bv && i < bi)) bv = s.score[i], bi = i;
    for (int o = 16; o; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ov > bv || (ov == bv && oi < bi)) bv = ov, bi = oi;
    }
    if (lane == 0) s.best_v[warp] = bv, s.best_i[warp] = bi;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
            if (s.best_v[w] > bv || (s.best_v[w] == bv && s.best_i[w] < bi)) bv = s.best_v[w], bi = s.best_i[w];
        s.token = bi == 0x7fffffff ? 0 : bi;
    }
    __syncthreads();
    return s.token;
}

// Chooses a token from logits[0..n). `proc` is null for the code predictor. Not inlined: one
// block runs it, once a phase, and inlined its registers were part of the frame kernel's
// allocation (0.6B frame kernel: 332 bytes of spill loads with it inlined, none without; the
// frame 2-3.4% faster at every batch size).
__device__ __noinline__ inline int sample_token(sampling_smem& s, const float* logits, int n, const sampling_desc& p,
                                                const talker_processors_desc* proc, float uniform) {
    // The logits copied global -> shared 16 bytes at a time, every copy in flight at once: one
    // L2 latency (a loop of loads unrolled four times took two or three) and no registers (all
    // twelve loads in registers spilled the frame kernel).
    const int n4 = reinterpret_cast<std::uintptr_t>(logits) % 16 == 0 ? n / 4 * 4 : 0;
    for (int i = 4 * threadIdx.x; i < n4; i += 4 * blockDim.x) cp_async::copy16(&s.score[i], logits + i);
    cp_async::commit();
    for (int i = n4 + threadIdx.x; i < n; i += blockDim.x) s.score[i] = logits[i];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s.seen[i] = 0;
    cp_async::wait_all();
    __syncthreads();
    if (proc) {
        if (proc->repetition_penalty != 1.0f)
            for (int i = threadIdx.x; i < proc->history_len; i += blockDim.x) s.seen[proc->history[i]] = 1;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            float x = s.score[i];
            if (s.seen[i]) x = x < 0 ? x * proc->repetition_penalty : x / proc->repetition_penalty;
            if (i == proc->eos && proc->history_len < proc->min_new_tokens) x = -INFINITY;
            if (i >= proc->suppress_begin && i < proc->suppress_end && i != proc->eos) x = -INFINITY;
            s.score[i] = x;
        }
        __syncthreads();
    }
    if (p.greedy) return block_argmax(s, n);

    // Temperature, and each thread's scores as order keys in registers (0 for -inf: a
    // finite score's key is never 0).
    constexpr int per = k_max_vocab / k_sampling_threads;
    unsigned int key[per];
#pragma unroll
    for (int j = 0; j < per; ++j) {
        const int i = static_cast<int>(threadIdx.x) + j * k_sampling_threads;
        key[j] = 0;
        if (i < n && s.score[i] != -INFINITY) {
            s.score[i] = s.score[i] / p.temperature;
            key[j] = order_key(s.score[i]);
        }
    }
    // The threshold T: a key with at least top_k keys at or above it (so at most the top_k-th
    // best's), found bit by bit from the top as the largest such key, one block-wide count per
    // bit, and left as soon as at most k_ranked keys are at or above it: the ranking below sorts
    // those and finds the top_k-th exactly. With real logits that is after the sign, the
    // exponent and a few mantissa bits, about 11 of the 32 steps (each a block barrier and eight
    // ballots). T stays 0 when fewer than top_k scores are finite: then every finite score is a
    // candidate.
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    // A warp's count is the sum of its ballots' population counts, independent of each other:
    // a thread's count of its own keys was a chain of 12 dependent increments and a warp
    // reduction, the longest part of a step.
    unsigned int threshold = 0;
    for (int bit = 31; bit >= 0; --bit) {
        const unsigned int trial = threshold | (1u << bit);
        int count = 0;
#pragma unroll
        for (int j = 0; j < per; ++j) count += __popc(__ballot_sync(0xffffffffu, key[j] >= trial));
        int(&counts)[32] = s.warp_count[bit & 1];  // the other buffer may still be being read
        if (lane == 0) counts[warp] = count;
        __syncthreads();
        int total = 0;
        for (int w = 0; w < k_sampling_threads / 32; ++w) total += counts[w];
        if (total >= p.top_k) {
            threshold = trial;
            if (total <= k_ranked) break;  // every thread read the same counts: a uniform exit
        }
    }
    // The candidates, in (warp, lane, j) order: a block-wide prefix sum of each thread's
    // count, so the subset kept when more than k_max_candidates tie is the same every run.
    int mine = 0;
#pragma unroll
    for (int j = 0; j < per; ++j) mine += key[j] != 0 && key[j] >= threshold;
    int before = mine;  // inclusive prefix over the warp's lanes, then exclusive
    for (int o = 1; o < 32; o <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, before, o);
        if (lane >= o) before += up;
    }
    if (lane == 31) s.warp_total[warp] = before;
    __syncthreads();
    int base = before - mine;
    for (int w = 0; w < warp; ++w) base += s.warp_total[w];
    if (threadIdx.x == k_sampling_threads - 1) s.n_cand = base + mine;
#pragma unroll
    for (int j = 0; j < per; ++j) {
        const int i = static_cast<int>(threadIdx.x) + j * k_sampling_threads;
        if (key[j] != 0 && key[j] >= threshold) {
            if (base < k_max_candidates) s.cand_score[base] = s.score[i], s.cand_id[base] = i;
            ++base;
        }
    }
    __syncthreads();
    const int ranked = min(s.n_cand, k_max_candidates);
    {
        // Each candidate's rank by (score descending, id ascending): as many threads share a
        // candidate's comparisons as leave every candidate a team (8, 4, 2 or 1).
        const int split = ranked <= k_sampling_threads / 8   ? 8
                          : ranked <= k_sampling_threads / 4 ? 4
                          : ranked <= k_sampling_threads / 2 ? 2
                                                              : 1;
        const int i = threadIdx.x / split;
        int rank = 0;
        // Unrolled: four comparisons' shared-memory reads in flight at once.
        if (i < ranked)
#pragma unroll 4
            for (int j = threadIdx.x % split; j < ranked; j += split)
                rank += s.cand_score[j] > s.cand_score[i] ||
                        (s.cand_score[j] == s.cand_score[i] && s.cand_id[j] < s.cand_id[i]);
        for (int o = 1; o < split; o <<= 1) rank += __shfl_xor_sync(0xffffffffu, rank, o);
        if (i < ranked && threadIdx.x % split == 0) {
            s.sorted_score[rank] = s.cand_score[i];
            s.sorted_id[rank] = s.cand_id[i];
        }
    }
    __syncthreads();
    // The candidates: the top_k best and every later one tied with the top_k-th (sorted, ties
    // are adjacent), as the reference keeps every score at least the top_k-th best.
    int nc = ranked;
    if (ranked > p.top_k) {
        const float kth = s.sorted_score[p.top_k - 1];
        nc = p.top_k;
        while (nc < ranked && s.sorted_score[nc] == kth) ++nc;
    }
    // Weights relative to the best score, each computed once and in parallel; the sums
    // below stay sequential, term by term in the reference's order.
    for (int i = threadIdx.x; i < nc; i += blockDim.x) s.weight[i] = sampling_exp(s.sorted_score[i] - s.sorted_score[0]);
    __syncthreads();
    // The reference's sums, term by term: its running sum over the first keep weights is
    // prefix[keep - 1], and the token it draws is the first whose running sum exceeds the
    // target. Thread 0 adds the prefix sums in order; every candidate then checks its own at
    // once (they never decrease, so one at most is the first above the target), where thread 0
    // walked them one shared-memory read and branch after the other.
    if (threadIdx.x == 0) {
        float run = 0.f;
        for (int i = 0; i < nc; ++i) {
            run += s.weight[i];
            s.prefix[i] = run;
        }
        float total = run;
        int keep = nc;
        if (p.top_p < 1.0f) {
            float tail = 0.f;
            while (keep > 1) {
                const float w = s.weight[keep - 1];
                if ((tail + w) / total > 1.0f - p.top_p) break;
                tail += w;
                --keep;
            }
            total = keep > 0 ? s.prefix[keep - 1] : 0.f;
        }
        s.keep = keep;
        s.target = uniform * total;
        s.token = nc > 0 ? s.sorted_id[keep - 1] : 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < s.keep; i += blockDim.x)
        if (s.prefix[i] > s.target && (i == 0 || !(s.prefix[i - 1] > s.target))) s.token = s.sorted_id[i];
    __syncthreads();
    return s.token;
}

}  // namespace megatts::mk

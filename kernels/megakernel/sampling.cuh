// sampling: the on-device token choice of one session, one block: the talker's
// processors (repetition penalty, min-new-tokens EOS mask, suppression), then
// arg-max or temperature / top-k / top-p / draw, with the exact arithmetic of
// kernels/reference/sampler.cpp: the same candidate set (every finite score at least
// the k-th best), the same order (score descending, id ascending), the same
// sequential sums of sampling_exp() and the same Philox draw. Identical logits and
// counters therefore give identical tokens on the CPU and the GPU.
//
// Contract (device, whole block, k_threads threads): top_k in 1..k_max_top_k unless
// greedy (the host refuses other values). More than k_max_candidates tied candidates
// keep the lowest ids (the CPU keeps all; such ties do not occur with real logits).
#pragma once

#include <cstdint>

#include "kernels/common/sampling_math.h"
#include "kernels/megakernel/device_model.h"

namespace megatts::mk {

inline constexpr int k_max_vocab = 3072;
inline constexpr int k_max_candidates = 256;

struct talker_processors_desc {
    const std::int32_t* history;  // codebook 0 of earlier frames
    int history_len;              // = frames emitted so far
    float repetition_penalty;
    int min_new_tokens;
    int eos;
    int suppress_begin, suppress_end;
};

struct sampling_smem {
    float score[k_max_vocab];
    unsigned char seen[k_max_vocab];
    unsigned int hist[256];
    float cand_score[k_max_candidates];
    int cand_id[k_max_candidates];
    float sorted_score[k_max_candidates];
    int sorted_id[k_max_candidates];
    float weight[k_max_candidates];  // sampling_exp(sorted_score[i] - best), computed in parallel
    int warp_sum[32];
    float best_v[32];
    int best_i[32];
    int n_cand;
    unsigned int prefix;
    int remaining;
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

// One radix-select step over the 256-bin histogram of the current digit: the highest
// digit b whose bins from 255 down to b hold at least `remaining` scores (or 0 when
// all together hold fewer) extends the prefix, and the scores in the bins above b
// leave `remaining`. A block-wide suffix sum, so no thread walks the bins alone.
// Requires blockDim.x >= 256 (one bin per thread).
__device__ inline void choose_digit(sampling_smem& s, int shift) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int b = 255 - static_cast<int>(threadIdx.x);  // thread j scans bins 255, 254, ... in order
    const int remaining = s.remaining;
    const int own = b >= 0 ? static_cast<int>(s.hist[b]) : 0;
    int incl = own;
    for (int o = 1; o < 32; o <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += up;
    }
    if (lane == 31) s.warp_sum[warp] = incl;
    __syncthreads();  // also: every thread has read s.remaining
    for (int w = 0; w < warp; ++w) incl += s.warp_sum[w];
    const int above = incl - own;  // scores in the bins above b
    const bool chosen = b > 0 ? incl >= remaining && above < remaining : b == 0 && above < remaining;
    if (chosen) {
        s.remaining = remaining - above;
        s.prefix |= static_cast<unsigned int>(b) << shift;
    }
    __syncthreads();
}

// Chooses a token from logits[0..n). `proc` is null for the code predictor.
__device__ inline int sample_token(sampling_smem& s, const float* logits, int n, const sampling_desc& p,
                                   const talker_processors_desc* proc, float uniform) {
    // Unrolled: the logits' loads in flight together, one L2 latency, not twelve.
#pragma unroll 4
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s.score[i] = logits[i];
        s.seen[i] = 0;
    }
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

    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (s.score[i] != -INFINITY) s.score[i] = s.score[i] / p.temperature;
    // Radix select of the top_k-th best finite score (ties counted), 8 bits at a time.
    if (threadIdx.x == 0) s.prefix = 0, s.remaining = p.top_k;
    unsigned int mask = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int b = threadIdx.x; b < 256; b += blockDim.x) s.hist[b] = 0;
        __syncthreads();
        // Scores of similar size share their top digit, so lanes of a warp that fall in
        // the same bin add their count once (one shared atomic per bin and warp).
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const unsigned int key = order_key(s.score[i]);
            const bool counted = s.score[i] != -INFINITY && (key & mask) == s.prefix;
            const unsigned int bin = counted ? (key >> shift) & 255u : 256u;
            const unsigned int peers = __match_any_sync(__activemask(), bin);
            if (counted && __ffs(peers) - 1 == static_cast<int>(threadIdx.x % 32))
                atomicAdd(&s.hist[bin], static_cast<unsigned int>(__popc(peers)));
        }
        __syncthreads();
        choose_digit(s, shift);
        mask |= 255u << shift;
    }
    if (threadIdx.x == 0) s.n_cand = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (s.score[i] == -INFINITY || order_key(s.score[i]) < s.prefix) continue;
        const int at = atomicAdd(&s.n_cand, 1);
        if (at < k_max_candidates) s.cand_score[at] = s.score[i], s.cand_id[at] = i;
    }
    __syncthreads();
    const int nc = min(s.n_cand, k_max_candidates);
    for (int i = threadIdx.x; i < nc; i += blockDim.x) {
        int rank = 0;
        for (int j = 0; j < nc; ++j) {
            const bool before = s.cand_score[j] > s.cand_score[i] ||
                                (s.cand_score[j] == s.cand_score[i] && s.cand_id[j] < s.cand_id[i]);
            rank += before;
        }
        s.sorted_score[rank] = s.cand_score[i];
        s.sorted_id[rank] = s.cand_id[i];
    }
    __syncthreads();
    // Weights relative to the best score, each computed once and in parallel; the sums
    // below stay sequential, term by term in the reference's order.
    for (int i = threadIdx.x; i < nc; i += blockDim.x) s.weight[i] = sampling_exp(s.sorted_score[i] - s.sorted_score[0]);
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.f;
        for (int i = 0; i < nc; ++i) total += s.weight[i];
        int keep = nc;
        if (p.top_p < 1.0f) {
            float tail = 0.f;
            while (keep > 1) {
                const float w = s.weight[keep - 1];
                if ((tail + w) / total > 1.0f - p.top_p) break;
                tail += w;
                --keep;
            }
            total = 0.f;
            for (int i = 0; i < keep; ++i) total += s.weight[i];
        }
        const float target = uniform * total;
        float cum = 0.f;
        int token = s.sorted_id[keep - 1];
        for (int i = 0; i < keep; ++i) {
            cum += s.weight[i];
            if (cum > target) {
                token = s.sorted_id[i];
                break;
            }
        }
        s.token = nc > 0 ? token : 0;
    }
    __syncthreads();
    return s.token;
}

}  // namespace megatts::mk

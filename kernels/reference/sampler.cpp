#include "kernels/reference/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/sampling_math.h"

namespace megatts::ref {
namespace {

constexpr float k_neg_inf = -std::numeric_limits<float>::infinity();

std::int32_t arg_max(std::span<const float> logits) {
    std::int32_t best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[best]) best = static_cast<std::int32_t>(i);
    return best;
}

}  // namespace

void apply_talker_processors(std::span<float> logits, std::span<const std::int32_t> history,
                             const talker_processors& p) {
    if (p.repetition_penalty != 1.0f) {
        // HF gathers each previously seen id once and rescales it once, however often
        // it occurred.
        std::vector<std::int32_t> seen(history.begin(), history.end());
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        for (auto id : seen) {
            float& x = logits[static_cast<std::size_t>(id)];
            x = x < 0 ? x * p.repetition_penalty : x / p.repetition_penalty;
        }
    }
    if (static_cast<int>(history.size()) < p.min_new_tokens && p.eos >= 0)
        logits[static_cast<std::size_t>(p.eos)] = k_neg_inf;
    for (std::int32_t id = p.suppress_begin; id < p.suppress_end; ++id)
        if (id != p.eos) logits[static_cast<std::size_t>(id)] = k_neg_inf;
}

std::int32_t choose_token(std::span<const float> logits, const sampling_params& p, float uniform) {
    if (p.greedy) return arg_max(logits);

    // Candidates in a fixed order (score descending, id ascending): the order the
    // probabilities are summed in, which the CUDA sampler reproduces.
    struct candidate {
        float score;
        std::int32_t id;
    };
    std::vector<candidate> c;
    c.reserve(logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (logits[i] != k_neg_inf) c.push_back({logits[i] / p.temperature, static_cast<std::int32_t>(i)});
    if (c.empty()) return arg_max(logits);
    std::sort(c.begin(), c.end(), [](const candidate& a, const candidate& b) {
        return a.score != b.score ? a.score > b.score : a.id < b.id;
    });

    // top-k keeps every token scoring at least the k-th best (HF keeps boundary ties).
    if (p.top_k > 0 && static_cast<std::size_t>(p.top_k) < c.size()) {
        float kth = c[static_cast<std::size_t>(p.top_k) - 1].score;
        auto end = std::find_if(c.begin(), c.end(), [&](const candidate& x) { return x.score < kth; });
        c.erase(end, c.end());
    }

    const float top = c.front().score;
    std::vector<float> w(c.size());
    float total = 0.f;
    for (std::size_t i = 0; i < c.size(); ++i) total += (w[i] = sampling_exp(c[i].score - top));

    // top-p (HF): drop the least likely tokens whose cumulative probability, counted
    // from the unlikely end, stays <= 1 - top_p; the most likely token always stays.
    std::size_t keep = c.size();
    if (p.top_p < 1.0f) {
        float tail = 0.f;
        while (keep > 1 && (tail + w[keep - 1]) / total <= 1.0f - p.top_p) tail += w[--keep];
        total = 0.f;
        for (std::size_t i = 0; i < keep; ++i) total += w[i];
    }

    const float target = uniform * total;
    float cum = 0.f;
    for (std::size_t i = 0; i < keep; ++i) {
        cum += w[i];
        if (cum > target) return c[i].id;
    }
    return c[keep - 1].id;
}

}  // namespace megatts::ref

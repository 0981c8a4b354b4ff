// gpu suite: the megakernel's device sampler (mk::sample_token) against the CPU reference
// (ref::choose_token) on crafted logits, where test_megakernel's sampling case sees only model
// logits. Each case aims at one branch of sample_token's top-k: the threshold search left early
// (the usual way), left at its first step with exactly k_ranked (64) keys or carried on with
// one more, or run to its last bit because more than k_ranked scores tie at the threshold; ties
// at the top_k-th score kept; fewer finite scores than top_k; and the top-p cut, greedy's
// arg-max and the talker's vocabulary size. 64 rows a case, each its own logits and Philox draw;
// every GPU token must be the reference's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/common/sampling_math.h"
#include "kernels/reference/sampler.h"
#include "tests/gpu/sampler_probe.h"

using namespace megatts;

namespace {

constexpr std::size_t k_rows = 64;
constexpr std::uint64_t k_seed = 20240611;

using row_fill = std::function<void(std::mt19937&, std::span<float>)>;

void normal(std::mt19937& rng, std::span<float> row, float sigma) {
    std::normal_distribution<float> g(0.f, sigma);
    for (float& x : row) x = g(rng);
}

// Scores at most `ceiling`, dense just below it: noise under the crafted top scores.
void below(std::mt19937& rng, std::span<float> row, float ceiling) {
    std::normal_distribution<float> g(0.f, 1.f);
    for (float& x : row) x = ceiling - std::abs(g(rng));
}

// `count` distinct scores from `from` in steps of `step`.
std::vector<float> ladder(float from, float step, int count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = from + step * static_cast<float>(i);
    return v;
}

// `top` over the row's first scores, then all shuffled: the crafted scores at random ids, so
// that they fall to every thread and key slot of the block.
void place(std::mt19937& rng, std::span<float> row, const std::vector<float>& top) {
    std::copy(top.begin(), top.end(), row.begin());
    std::shuffle(row.begin(), row.end(), rng);
}

// `distinct` scores from 6 up, then `tied` scores of 5, over noise below 4.
row_fill tied_after(int distinct, int tied) {
    return [=](std::mt19937& rng, std::span<float> row) {
        below(rng, row, 4.f);
        auto top = ladder(6.f, 0.05f, distinct);
        top.resize(static_cast<std::size_t>(distinct + tied), 5.f);
        place(rng, row, top);
    };
}

// `count` distinct positive scores, the rest negative.
row_fill positive(int count) {
    return [=](std::mt19937& rng, std::span<float> row) {
        below(rng, row, -1.f);
        place(rng, row, ladder(1.f, 0.03f, count));
    };
}

struct crafted {
    const char* what;
    int n;
    ref::sampling_params p;
    row_fill fill;
};

}  // namespace

TEST_CASE("the GPU sampler picks what the CPU sampler picks on crafted logits", "[gpu]") {
    const auto with = [](int top_k, float top_p = 1.f) { return ref::sampling_params{false, 0.9f, top_k, top_p}; };
    const ref::sampling_params cp = with(50);  // the code predictor's
    const row_fill gaussian = [](auto& rng, auto row) { normal(rng, row, 3.f); };
    const crafted cases[] = {
        // The usual way: the search leaves once the sign, the exponent and a few mantissa bits
        // leave top_k..k_ranked keys at or above the threshold.
        {"gaussian", 2048, cp, gaussian},
        {"gaussian, the talker's vocabulary", 3072, cp, gaussian},  // every thread's 12 keys in use
        {"gaussian, top_k = k_max_top_k", 2048, with(64), gaussian},
        {"gaussian, top_k = 1", 2048, with(1), gaussian},  // a few keys ranked, eight threads each
        {"gaussian, top_k = 20, top_p = 0.8", 2048, with(20, 0.8f), gaussian},
        // Integers: the maximum ties, and the lowest id must win on both.
        {"greedy, integer logits", 2048, {true, 1.f, 0, 1.f},
         [](auto& rng, auto row) {
             normal(rng, row, 3.f);
             for (float& x : row) x = std::round(x);
         }},
        // 300 consecutive floats: more than k_ranked keys at or above every threshold until the
        // low mantissa bits: from 6 the search leaves at bit 4, its 28th step.
        {"300 scores in 300 ulps above 6", 2048, cp,
         [](auto& rng, auto row) {
             below(rng, row, 4.f);
             std::vector<float> top{6.f};
             while (top.size() < 300) top.push_back(std::nextafter(top.back(), 7.f));
             place(rng, row, top);
         }},
        // No threshold has at most k_ranked keys at or above it: the search runs to bit 0, the
        // 200 are ranked a thread each and all kept as ties of the top_k-th. More than
        // k_max_candidates (256) tied would leave the GPU a subset (sampling.cuh's contract).
        {"200 tied at the top", 2048, cp, tied_after(0, 200)},
        // The top_k-th (50th) ties with the 5 after it: the search leaves early with these 55
        // ranked, and the candidates are the top_k and those 5.
        {"45 distinct, then 10 tied at the top_k-th", 2048, cp, tied_after(45, 10)},
        // With the 15 after it: 65 keys, one past k_ranked, found at bit 0 and ranked two threads
        // a candidate.
        {"45 distinct, then 20 tied at the top_k-th", 2048, cp, tied_after(45, 20)},
        // The same past k_ranked: 220 keys at the threshold, found at bit 0, all candidates.
        {"20 distinct, then 200 tied at the top_k-th", 2048, cp, tied_after(20, 200)},
        // The first step (the sign bit) counts exactly k_ranked keys and the search ends there:
        // 64 ranked, four threads a candidate.
        {"64 positive, the rest negative", 2048, cp, positive(64)},
        // One more: the sign bit counts 65 and the search goes on into the exponent.
        {"65 positive, the rest negative", 2048, cp, positive(65)},
        // Fewer than top_k keys ever counted: the threshold stays 0 and every finite score is a
        // candidate (a -inf one never: its key is 0).
        {"10 finite, the rest -inf", 2048, cp,
         [](auto& rng, auto row) {
             normal(rng, row, 3.f);
             std::fill(row.begin() + 10, row.end(), -std::numeric_limits<float>::infinity());
             std::shuffle(row.begin(), row.end(), rng);
         }},
        // All equal: k_max_candidates tie at the threshold, the most the contract keeps whole
        // (all 2048 equal would leave the GPU 256 of them).
        {"256 equal logits", 256, cp, [](auto&, auto row) { std::fill(row.begin(), row.end(), 1.5f); }},
    };
    std::size_t same = 0;
    for (std::uint32_t c = 0; c < std::size(cases); ++c) {
        const crafted& k = cases[c];
        INFO(k.what);
        std::mt19937 rng(c);
        const auto n = static_cast<std::size_t>(k.n);
        std::vector<float> logits(k_rows * n), uniforms(k_rows);
        for (std::size_t r = 0; r < k_rows; ++r) {
            k.fill(rng, std::span(logits).subspan(r * n, n));
            uniforms[r] = sampling_uniform(k_seed, static_cast<std::uint32_t>(r), c);
        }
        auto gpu = test::sample_on_device(logits, static_cast<int>(k_rows), k.n, k.p, uniforms);
        if (!gpu) FAIL(gpu.err().message);
        for (std::size_t r = 0; r < k_rows; ++r) {
            const auto want = ref::choose_token(std::span(logits).subspan(r * n, n), k.p, uniforms[r]);
            INFO("row " << r << ", uniform " << uniforms[r]);
            CHECK((*gpu)[r] == want);
            same += (*gpu)[r] == want;
        }
    }
    std::printf("crafted logits, %zu cases: %zu of %zu GPU tokens identical to the CPU reference's\n", std::size(cases),
                same, std::size(cases) * k_rows);
}

// vocoder_inputs: what the reference vocoder's tools and tests decode (bench_vocoder_reference,
// vocoder_precision, test_vocoder): a checkpoint's vocoder weights by directory, and seeded random codes.
//
// Contract: load_vocoder_or_report() returns the weights, or prints the checkpoint's or the
// loader's error to stderr and returns nothing. random_codes() gives `frames` frames of codes
// uniform over the codebook, [frames][num_quantizers], the same for the same seed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "kernels/common/model_dims.h"
#include "kernels/reference/vocoder/vocoder_weights.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/vocoder_loader.h"

namespace megatts::test {

inline std::optional<ref::vocoder_weights> load_vocoder_or_report(const char* dir) {
    auto c = checkpoint::open(dir);
    if (!c) {
        std::fprintf(stderr, "%s\n", c.err().message.c_str());
        return std::nullopt;
    }
    auto w = load_vocoder_weights(*c);
    if (!w) {
        std::fprintf(stderr, "%s\n", w.err().message.c_str());
        return std::nullopt;
    }
    return std::move(w.value());
}

inline std::vector<std::int32_t> random_codes(const vocoder_dims& d, unsigned seed, int frames) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int32_t> code(0, d.codebook_size - 1);
    std::vector<std::int32_t> codes(static_cast<std::size_t>(frames) * d.num_quantizers);
    for (auto& c : codes) c = code(rng);
    return codes;
}

}  // namespace megatts::test

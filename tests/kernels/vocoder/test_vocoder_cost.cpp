// unit: kernels/vocoder/vocoder_cost (the benchmark's bytes and FLOPs per frame)
// against a count made a different way, from the speech tokenizer's own tensor list
// (tests/fixtures/tiny-cv06): a weight tensor's multiply-adds per row of its stage
// are its element count, whether it is a conv, a linear map, a depthwise conv or a
// transposed conv (per input row), so a frame's FLOPs are 2 x elements x rows of the
// stage, summed, plus the attention; and a call streams every decoder tensor but the
// codebooks (gathered, not streamed) and the encoder-side rvq input projections.
#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <string>

#include "kernels/vocoder/vocoder_cost.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/safetensors.h"
#include "pipeline/model/vocoder_loader.h"
#include "tests/support/golden_case.h"

using namespace megatts;

namespace {

struct loaded {
    checkpoint ckpt;
    ref::vocoder_weights weights;
    safetensors_file tensors;
};

loaded& tiny() {
    static loaded* l = [] {
        auto c = checkpoint::open(test::fixture("tiny-cv06"));
        REQUIRE(c.ok());
        auto w = load_vocoder_weights(*c);
        REQUIRE(w.ok());
        auto f = safetensors_file::open(test::fixture("tiny-cv06/speech_tokenizer/model.safetensors"));
        REQUIRE(f.ok());
        return new loaded{std::move(c.value()), std::move(w.value()), std::move(f.value())};
    }();
    return *l;
}

bool streamed(const std::string& name) {
    return name.starts_with("decoder.") && name.find("._codebook.") == std::string::npos &&
           name.find("quantizer.rvq_first.input_proj") == std::string::npos &&
           name.find("quantizer.rvq_rest.input_proj") == std::string::npos;
}

// Rows per frame of the stage a weight tensor works at (its input rows for a
// transposed conv), or 0 for a tensor that is no matrix (norms, scales, SnakeBeta).
int rows_of(const tensor_view& t, const vocoder_dims& d) {
    if (t.shape.size() < 2 || !t.name.ends_with(".weight") || !streamed(t.name)) return 0;
    std::smatch m;
    const int ratio0 = d.upsampling_ratios[0], ratio1 = d.upsampling_ratios[1];
    const int up = ratio0 * ratio1;
    if (std::regex_search(t.name, m, std::regex(R"(^decoder\.upsample\.(\d)\.0\.)")))
        return m[1] == "0" ? 1 : ratio0;  // ConvTranspose: input rows
    if (std::regex_search(t.name, m, std::regex(R"(^decoder\.upsample\.(\d)\.1\.)")))
        return m[1] == "0" ? ratio0 : up;
    if (std::regex_search(t.name, m, std::regex(R"(^decoder\.decoder\.(\d)\.)"))) {
        const int b = std::stoi(m[1]);
        if (b == 0) return up;
        int rows = up;
        for (int i = 0; i < std::min(b, 5) - 1; ++i) rows *= d.upsample_rates[i];
        if (b == 6) return rows;  // the output conv: every sample
        const bool transposed = t.name.find(".block.1.") != std::string::npos;
        return transposed ? rows : rows * d.upsample_rates[b - 1];
    }
    return 1;  // quantizer projections, pre_conv, pre_transformer
}

}  // namespace

TEST_CASE("vocoder cost: a call streams every decoder tensor but the codebooks", "[unit]") {
    auto& t = tiny();
    double bytes = 0;
    for (const auto& v : t.tensors.tensors())
        if (streamed(v.name)) bytes += 4.0 * static_cast<double>(v.numel());
    const auto cost = count_vocoder_cost(t.weights);
    std::printf("tiny vocoder: %.0f weight bytes per call (checkpoint tensors: %.0f), %.0f FLOPs per frame\n",
                cost.weight_bytes, bytes, cost.flops);
    CHECK(cost.weight_bytes == bytes);
    double by_stage = 0;
    for (const auto& s : cost.stages) by_stage += s.weight_bytes;
    CHECK(by_stage == cost.weight_bytes);
    CHECK(cost.state_bytes > 0);
    CHECK(cost.activation_bytes > 0);
    CHECK(cost.call_bytes(4) == cost.weight_bytes + 4 * (cost.state_bytes + cost.activation_bytes));
}

TEST_CASE("vocoder cost: FLOPs are two per multiply-add at each stage's rows", "[unit]") {
    auto& t = tiny();
    const auto& d = t.ckpt.config().vocoder;
    double flops = 0;
    for (const auto& v : t.tensors.tensors()) flops += 2.0 * static_cast<double>(v.numel()) * rows_of(v, d);
    const auto& tr = d.transformer;
    flops += 4.0 * tr.layers * tr.heads * tr.head_dim * d.sliding_window;  // scores and weighted sum, full window
    const auto cost = count_vocoder_cost(t.weights);
    CHECK(cost.flops == Approx(flops).epsilon(1e-12));
    CHECK(cost.stages.size() == 11);  // quantizer, pre_conv, pre_transformer, 2 upsamplers, decoder.0, 4 blocks, audio
}

// A precision study on the fp32 reference vocoder: which layers could multiply reduced-
// precision operands (dense_weights::operand_bits: 11 models a TF32 tensor-core product,
// 8 bf16) and keep the audio within the CUDA vocoder's parity bound, 1e-3 of the peak
// (issue 5). Decodes random codes once as published, then once per group of layers with
// only that group's operands rounded, and once with every layer's, and prints each
// decoding's largest sample error relative to the published decoding's peak. The groups
// run on all cores, one decoding a thread (about 0.3 s of a core a frame at full size).
// Usage: vocoder_precision CHECKPOINT_DIR [FRAMES] [BITS]   (defaults 80 frames, 11 bits)
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/reference/vocoder/vocoder_stream.h"
#include "tests/support/vocoder_inputs.h"

using namespace megatts;

namespace {

bool parse_int(const char* s, int& v) {
    const std::string_view t(s);
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    return r.ec == std::errc{} && r.ptr == t.data() + t.size();
}

// A group of layers: those whose names (for_each_dense's) start with one of `prefixes`
// and end with `suffix`.
struct layer_group {
    std::string name;
    std::vector<std::string> prefixes;
    std::string suffix;

    bool has(const std::string& layer) const {
        const bool tail = layer.size() >= suffix.size() && layer.compare(layer.size() - suffix.size(), suffix.size(), suffix) == 0;
        return tail && std::any_of(prefixes.begin(), prefixes.end(),
                                   [&](const std::string& p) { return layer.rfind(p, 0) == 0; });
    }
};

std::vector<layer_group> groups() {
    std::vector<layer_group> g{{"dequant_proj + pre_conv", {"dequant_proj", "pre_conv"}, ""},
                               {"pre_transformer", {"pre_transformer."}, ""},
                               {"upsample.0", {"upsample.0."}, ""},
                               {"upsample.1", {"upsample.1."}, ""},
                               {"decoder0", {"decoder0"}, ""}};
    for (int b = 1; b <= 4; ++b) {
        const std::string p = "decoder." + std::to_string(b) + ".";
        g.push_back({p + "up (transposed conv)", {p + "up"}, ""});
        g.push_back({p + "units conv1 (7 taps)", {p + "units."}, ".conv1"});
        g.push_back({p + "units conv2 (1x1)", {p + "units."}, ".conv2"});
    }
    g.push_back({"final_conv", {"final_conv"}, ""});
    // The decoder blocks' products together: most of a call's FLOPs (the 7-tap convs most).
    std::vector<std::string> units, blocks;
    for (int b = 1; b <= 4; ++b) {
        units.push_back("decoder." + std::to_string(b) + ".units.");
        blocks.push_back("decoder." + std::to_string(b) + ".");
    }
    g.push_back({"blocks 1-4: conv1 (7 taps)", units, ".conv1"});
    g.push_back({"blocks 1-4: conv1 + conv2", units, ""});
    g.push_back({"blocks 1-4: every product", blocks, ""});
    g.push_back({"every layer", {""}, ""});
    return g;
}

struct outcome {
    int layers = 0;
    std::vector<float> audio;
    std::string error;
};

outcome decode(ref::vocoder_weights w, const layer_group* group, int bits, const std::vector<std::int32_t>& codes,
               int frames) {
    outcome o;
    if (group)
        ref::for_each_dense(w, [&](const std::string& name, ref::dense_weights& d) {
            if (!group->has(name)) return;
            d.operand_bits = bits;
            ++o.layers;
        });
    ref::vocoder_stream s(w);
    auto pcm = s.decode(codes, frames);
    if (!pcm)
        o.error = pcm.err().message;
    else
        o.audio = std::move(pcm.value());
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    int frames = 80, bits = 11;
    if (argc < 2 || argc > 4 || (argc > 2 && (!parse_int(argv[2], frames) || frames < 1)) ||
        (argc > 3 && (!parse_int(argv[3], bits) || bits < 2 || bits > 24))) {
        std::fprintf(stderr, "usage: %s CHECKPOINT_DIR [FRAMES >= 1] [BITS 2..24]\n", argv[0]);
        return 2;
    }
    const auto w = test::load_vocoder_or_report(argv[1]);
    if (!w) return 1;
    const std::vector<std::int32_t> codes = test::random_codes(w->dims, 1000, frames);

    const std::vector<layer_group> g = groups();
    // Job 0 is the published decoding; job i + 1 rounds group i. At most one job a core.
    const std::size_t jobs = g.size() + 1, width = std::max(1u, std::thread::hardware_concurrency());
    std::vector<outcome> done(jobs);
    for (std::size_t first = 0; first < jobs; first += width) {
        std::vector<std::future<outcome>> running;
        for (std::size_t j = first; j < std::min(jobs, first + width); ++j)
            running.push_back(std::async(std::launch::async, decode, *w, j == 0 ? nullptr : &g[j - 1], bits,
                                         std::cref(codes), frames));
        for (std::size_t j = first; j < std::min(jobs, first + width); ++j) done[j] = running[j - first].get();
    }
    for (const auto& o : done)
        if (!o.error.empty()) {
            std::fprintf(stderr, "decoding failed: %s\n", o.error.c_str());
            return 1;
        }
    const std::vector<float>& base = done[0].audio;
    // The decoder clamps its output to [-1, 1]: where the published decoding is clamped, a
    // rounded one that is too shows no error, so the share of clamped samples is printed.
    float peak = 0.f;
    std::size_t clamped = 0;
    for (float v : base) {
        peak = std::max(peak, std::fabs(v));
        clamped += std::fabs(v) == 1.f;
    }
    std::printf("%s: %d frames of random codes, operands rounded to %d significant bits; audio peak %.4f, "
                "%.2f%% of samples clamped at +-1\n",
                argv[1], frames, bits, static_cast<double>(peak), 100.0 * static_cast<double>(clamped) / base.size());
    std::printf("%-30s %7s %16s\n", "rounded layers", "layers", "max error / peak");
    for (std::size_t i = 0; i < g.size(); ++i) {
        const outcome& o = done[i + 1];
        double worst = 0;
        for (std::size_t k = 0; k < base.size(); ++k)
            worst = std::max(worst, std::fabs(static_cast<double>(o.audio[k]) - base[k]));
        std::printf("%-30s %7d %16.3g\n", g[i].name.c_str(), o.layers, peak > 0 ? worst / peak : worst);
    }
    return 0;
}

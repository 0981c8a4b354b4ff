// The reference vocoder against the official decoder's stages on the golden cases,
// and its streaming contract: any split of an utterance into decode() calls gives
// the samples and stages of one call over the whole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reference/vocoder/vocoder_stream.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/vocoder_loader.h"
#include "tests/support/golden_case.h"
#include "tests/support/tensor_compare.h"

using namespace megatts;
using ref::vocoder_stage;

namespace {

const ref::vocoder_weights& weights_for(const std::string& checkpoint_name) {
    // Loaded once per checkpoint: every test decodes the same checkpoints' cases.
    static std::map<std::string, ref::vocoder_weights> loaded;
    if (auto it = loaded.find(checkpoint_name); it != loaded.end()) return it->second;
    auto c = checkpoint::open(test::fixture(checkpoint_name));
    INFO((c ? "" : c.err().message));
    REQUIRE(c.ok());
    auto w = load_vocoder_weights(*c);
    INFO((w ? "" : w.err().message));
    REQUIRE(w.ok());
    return loaded.emplace(checkpoint_name, std::move(w.value())).first->second;
}

// One stage as a stream reported it: every call's rows, in order, time-major.
struct recorded_stage {
    int channels = 0;
    std::vector<float> values;
};

using stage_key = std::pair<vocoder_stage, int>;

class stage_recorder {
public:
    ref::vocoder_observer observer() {
        return [this](const ref::vocoder_stage_output& s) {
            auto& r = stages_[{s.stage, s.index}];
            r.channels = s.channels;
            r.values.insert(r.values.end(), s.values.begin(), s.values.end());
        };
    }
    const std::map<stage_key, recorded_stage>& stages() const { return stages_; }

private:
    std::map<stage_key, recorded_stage> stages_;
};

// Where a stage lives in a golden case file. Conv activations are stored
// channel-first ([C][T]); transformer rows time-major ([T][H]); voc_pt_layers
// holds every layer ([layers][T][H]).
struct golden_stage {
    vocoder_stage stage;
    int index;
    std::string tensor;
    bool channel_first;
};

std::vector<golden_stage> golden_stages(int layers) {
    std::vector<golden_stage> s{
        {vocoder_stage::dequant, 0, "voc_dequant", true},
        {vocoder_stage::pre_conv, 0, "voc_pre_conv", true},
        {vocoder_stage::pt_input_proj, 0, "voc_pt_input_proj", false},
        {vocoder_stage::pre_transformer, 0, "voc_pre_transformer", false},
        {vocoder_stage::upsample, 0, "voc_upsample0", true},
        {vocoder_stage::upsample, 1, "voc_upsample1", true},
        {vocoder_stage::decoder0, 0, "voc_decoder0", true},
        {vocoder_stage::audio, 0, "audio", false},
    };
    for (int l = 0; l < layers; ++l) s.push_back({vocoder_stage::pt_layer, l, "voc_pt_layers", false});
    for (int b = 1; b <= 4; ++b)
        s.push_back({vocoder_stage::block, b, "voc_block" + std::to_string(b), true});
    return s;
}

std::vector<float> transposed(const recorded_stage& r) {
    const std::size_t channels = static_cast<std::size_t>(r.channels), rows = r.values.size() / channels;
    std::vector<float> t(r.values.size());
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t c = 0; c < channels; ++c) t[c * rows + i] = r.values[i * channels + c];
    return t;
}

// The golden tensor of stage s, cut to the recorded stage's layer for voc_pt_layers.
std::vector<float> golden_values(const test::golden_case& g, const golden_stage& s, std::size_t size) {
    auto all = g.floats(s.tensor);
    if (s.stage != vocoder_stage::pt_layer) return all;
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(s.index * size);
    return {begin, begin + static_cast<std::ptrdiff_t>(size)};
}

// Decodes the codes in calls of the given frame counts (cycled), recording stages.
std::vector<float> decode_in_chunks(ref::vocoder_stream& s, const vocoder_dims& dims,
                                    const std::vector<std::int32_t>& codes, const std::vector<int>& chunks) {
    const int nq = dims.num_quantizers;
    const int frames = static_cast<int>(codes.size()) / nq;
    std::vector<float> pcm;
    for (int f = 0, i = 0; f < frames; ++i) {
        const int n = std::min(chunks[i % chunks.size()], frames - f);
        auto part = s.decode(std::span(codes).subspan(f * nq, n * nq), n);
        INFO((part ? "" : part.err().message));
        REQUIRE(part.ok());
        CHECK(part->size() == static_cast<std::size_t>(dims.samples_per_frame()) * n);
        pcm.insert(pcm.end(), part->begin(), part->end());
        f += n;
    }
    return pcm;
}

}  // namespace

TEST_CASE("vocoder reproduces every golden stage and the audio of every case") {
    for (const auto& [checkpoint_name, case_name] : test::all_golden_cases()) {
        test::golden_case g(checkpoint_name, case_name);
        const auto& w = weights_for(checkpoint_name);
        const auto codes = g.ints("codes");
        const int frames = static_cast<int>(codes.size()) / w.dims.num_quantizers;

        ref::vocoder_stream stream(w);
        stage_recorder recorder;
        stream.set_observer(recorder.observer());
        auto pcm = stream.decode(codes, frames);
        INFO(case_name << (pcm ? "" : ": " + pcm.err().message));
        REQUIRE(pcm.ok());
        CHECK(pcm->size() == 1920u * frames);
        CHECK(stream.frames_decoded() == frames);
        test::check_close(case_name + " decode() samples", *pcm, g.floats("audio"), 1e-4);

        for (const auto& s : golden_stages(w.dims.transformer.layers)) {
            const auto it = recorder.stages().find({s.stage, s.index});
            const std::string label = case_name + " " + ref::vocoder_stage_name(s.stage, s.index);
            INFO(label);
            REQUIRE(it != recorder.stages().end());
            const auto mine = s.channel_first ? transposed(it->second) : it->second.values;
            test::check_close(label, mine, golden_values(g, s, mine.size()), 1e-4);
        }
    }
}

TEST_CASE("vocoder decodes frame by frame and in uneven chunks exactly as in one call") {
    const std::vector<std::vector<int>> splits{{1}, {1, 3, 2, 5, 9, 4}};
    for (const auto& [checkpoint_name, case_name] : test::all_golden_cases()) {
        test::golden_case g(checkpoint_name, case_name);
        const auto& w = weights_for(checkpoint_name);
        const auto codes = g.ints("codes");
        const int frames = static_cast<int>(codes.size()) / w.dims.num_quantizers;

        ref::vocoder_stream whole(w);
        stage_recorder whole_stages;
        whole.set_observer(whole_stages.observer());
        const auto whole_pcm = decode_in_chunks(whole, w.dims, codes, {frames});

        for (const auto& split : splits) {
            ref::vocoder_stream stream(w);
            stage_recorder stages;
            stream.set_observer(stages.observer());
            const auto pcm = decode_in_chunks(stream, w.dims, codes, split);
            const std::string label = case_name + (split.size() == 1 ? " frame by frame" : " uneven chunks");
            test::check_close(label + " samples", pcm, whole_pcm, 1e-5);
            REQUIRE(stages.stages().size() == whole_stages.stages().size());
            for (const auto& [key, stage] : whole_stages.stages())
                test::check_close(label + " " + ref::vocoder_stage_name(key.first, key.second),
                                  stages.stages().at(key).values, stage.values, 1e-5);
        }
    }
}

TEST_CASE("vocoder rejects malformed codes and keeps its state") {
    test::golden_case g("tiny-cv06", "cv06_en_ryan_english");
    const auto& w = weights_for("tiny-cv06");
    const auto codes = g.ints("codes");
    const int frames = static_cast<int>(codes.size()) / w.dims.num_quantizers;
    ref::vocoder_stream stream(w);

    auto bad = codes;
    bad[3] = w.dims.codebook_size;
    const std::size_t nq = static_cast<std::size_t>(w.dims.num_quantizers);
    auto r = stream.decode(std::span(bad).first(nq), 1);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::invalid_input);
    bad[3] = -1;
    CHECK_FALSE(stream.decode(std::span(bad).first(nq), 1).ok());
    CHECK_FALSE(stream.decode(std::span(codes).first(nq), 2).ok());
    auto empty = stream.decode({}, 0);
    REQUIRE(empty.ok());
    CHECK(empty->empty());
    CHECK(stream.frames_decoded() == 0);

    auto pcm = stream.decode(codes, frames);
    REQUIRE(pcm.ok());
    test::check_close("after rejected calls", *pcm, g.floats("audio"), 1e-4);
}

// make-checkpoint's library: a tiny random checkpoint opens, is reproducible from its
// seed, has the scales it promises and drives the reference generator to sane logits;
// the full shapes' configs are the published ones. Full-size weights are never
// written here (CI has 2 cores); see the checkpoint maker's report for those.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kernels/reference/generator.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/model/random_checkpoint.h"
#include "pipeline/model/reference_loader.h"
#include "pipeline/model/tensor_names.h"
#include "pipeline/text/bpe_tokenizer.h"
#include "pipeline/text/tts_prompt_ids.h"

using namespace megatts;
namespace fs = std::filesystem;
namespace tn = megatts::tensor_names;

namespace {

// A path for one test's checkpoint (absent at first), removed afterwards.
struct temp_dir {
    fs::path path;
    explicit temp_dir(const std::string& tag)
        : path(fs::temp_directory_path() / ("megatts-random-ckpt-" + tag + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
    }
    ~temp_dir() { fs::remove_all(path); }
};

random_checkpoint_options options(checkpoint_shape shape, std::uint64_t seed, const fs::path& out) {
    return {.shape = shape, .seed = seed, .out_dir = out.string(), .data_dir = MEGATTS_DATA_DIR};
}

void make(checkpoint_shape shape, std::uint64_t seed, const fs::path& out) {
    auto r = make_random_checkpoint(options(shape, seed, out));
    INFO((r ? "" : r.err().message));
    REQUIRE(r.ok());
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), {}};
}

nlohmann::json json_of(const fs::path& p) { return nlohmann::json::parse(file_bytes(p)); }

fs::path published(const std::string& model) { return fs::path(MEGATTS_DATA_DIR) / "configs" / model; }

struct moments {
    double mean = 0, std = 0;
};

moments moments_of(const std::vector<float>& v) {
    double sum = 0, sq = 0;
    for (float x : v) sum += x, sq += static_cast<double>(x) * x;
    const double mean = sum / static_cast<double>(v.size());
    return {mean, std::sqrt(sq / static_cast<double>(v.size()) - mean * mean)};
}

const std::vector<std::string> k_files{"config.json",
                                       "generation_config.json",
                                       "preprocessor_config.json",
                                       "vocab.json",
                                       "merges.txt",
                                       "tokenizer_config.json",
                                       "model.safetensors",
                                       "speech_tokenizer/config.json",
                                       "speech_tokenizer/preprocessor_config.json",
                                       "speech_tokenizer/model.safetensors"};

}  // namespace

TEST_CASE("shape names round-trip") {
    for (auto shape : {checkpoint_shape::tiny, checkpoint_shape::cv_0b6, checkpoint_shape::cv_1b7})
        CHECK(parse_checkpoint_shape(checkpoint_shape_name(shape)) == shape);
    CHECK(parse_checkpoint_shape("0.6b-customvoice") == checkpoint_shape::cv_0b6);
    CHECK_FALSE(parse_checkpoint_shape("0.6b").has_value());
}

TEST_CASE("a tiny checkpoint has the Hugging Face layout and opens") {
    temp_dir dir("layout");
    make(checkpoint_shape::tiny, 7, dir.path);
    for (const auto& f : k_files) CHECK(fs::is_regular_file(dir.path / f));

    auto c = checkpoint::open(dir.path.string());
    INFO((c ? "" : c.err().message));
    REQUIRE(c.ok());
    CHECK(c->model_file().tensors().size() == model_tensor_specs(c->config()).size());
    CHECK(c->vocoder_file().tensors().size() == vocoder_tensor_specs(c->config()).size());
    CHECK(c->model_file().metadata().at("format") == "pt");
    CHECK(c->model_file().metadata().at("megatts_synthetic_seed") == "7");
    CHECK(c->vocoder_file().metadata().at("megatts_synthetic_shape") == "tiny");

    // Shrunk exactly like the golden tiny-cv06, plus the marker; the vocoder keeps the
    // published sliding window.
    auto config = json_of(dir.path / "config.json");
    CHECK(config.at(synthetic_marker_key) == true);
    config.erase(synthetic_marker_key);
    CHECK(config == json_of(fs::path(MEGATTS_FIXTURE_DIR) / "tiny-cv06/config.json"));
    auto vocoder = json_of(dir.path / "speech_tokenizer/config.json");
    CHECK(vocoder["decoder_config"]["sliding_window"] == 72);
    vocoder["decoder_config"]["sliding_window"] = 4;
    CHECK(vocoder == json_of(fs::path(MEGATTS_FIXTURE_DIR) / "tiny-cv06/speech_tokenizer/config.json"));

    for (const char* f : {"vocab.json", "merges.txt", "tokenizer_config.json"})
        CHECK(file_bytes(dir.path / f) == file_bytes(fs::path(MEGATTS_DATA_DIR) / "tokenizer" / f));
}

TEST_CASE("the weights are a function of the seed") {
    temp_dir a("seed-a"), b("seed-b"), other("seed-other");
    make(checkpoint_shape::tiny, 1234, a.path);
    make(checkpoint_shape::tiny, 1234, b.path);
    make(checkpoint_shape::tiny, 1235, other.path);
    for (const auto& f : k_files) {
        INFO(f);
        CHECK(file_bytes(a.path / f) == file_bytes(b.path / f));
    }
    for (const char* f : {"model.safetensors", "speech_tokenizer/model.safetensors"}) {
        INFO(f);
        CHECK(file_bytes(a.path / f) != file_bytes(other.path / f));
    }
}

TEST_CASE("the weights have the scales of their roles") {
    temp_dir dir("scales");
    make(checkpoint_shape::tiny, 99, dir.path);
    auto c = checkpoint::open(dir.path.string());
    REQUIRE(c.ok());
    const auto& config = c->config();
    auto model = [&](const std::string& name) { return *to_f32(c->tensor(name)); };
    auto vocoder = [&](const std::string& name) { return *to_f32(c->vocoder_tensor(name)); };
    const int h = config.talker.body.hidden, layers = config.talker.body.layers;

    auto text = moments_of(model(tn::text_embedding));
    CHECK(std::abs(text.mean) < 0.01);
    CHECK(text.std == Approx(1.0).epsilon(0.01));
    CHECK(moments_of(model(tn::codec_embedding)).std == Approx(0.25).epsilon(0.05));
    CHECK(moments_of(model(tn::cp_codec_embedding(3))).std == Approx(0.25).epsilon(0.05));
    auto norm = moments_of(model(tn::talker_layer(1, layer_tensor::input_norm)));
    CHECK(norm.mean == Approx(1.0).epsilon(0.1));
    CHECK(norm.std == Approx(0.1).epsilon(0.5));
    CHECK(moments_of(model(tn::talker_layer(0, layer_tensor::q_proj))).std == Approx(1 / std::sqrt(h)).epsilon(0.1));
    // Residual-branch outputs are scaled by 1/sqrt(2 * layers).
    const double o_std = 1 / std::sqrt(config.talker.body.q_width()) / std::sqrt(2.0 * layers);
    CHECK(moments_of(model(tn::talker_layer(0, layer_tensor::o_proj))).std == Approx(o_std).epsilon(0.1));

    // The EOS row of the codec head is drawn at half scale.
    auto head = model(tn::codec_head);
    const auto eos = static_cast<std::size_t>(config.codec_ids.eos);
    auto row = [&](std::size_t r) {
        return moments_of({head.begin() + static_cast<long>(r * h), head.begin() + static_cast<long>((r + 1) * h)});
    };
    CHECK(moments_of(head).std == Approx(1 / std::sqrt(h)).epsilon(0.05));
    CHECK(row(eos).std < 0.8 * row(eos - 1).std);

    // Codebooks: usage U(0.5, 2) but ~5% of the rows below the 1e-5 clamp; decoded
    // vectors embedding_sum / clamp(usage) are N(0, 1).
    auto usage = vocoder(tn::voc_codebook_usage(5));
    auto sum = vocoder(tn::voc_codebook_sum(5));
    const std::size_t dim = sum.size() / usage.size();
    std::size_t dead = 0, live_in_range = 0;
    std::vector<float> decoded;
    for (std::size_t r = 0; r < usage.size(); ++r) {
        if (usage[r] < 1e-5f) ++dead;
        else live_in_range += usage[r] >= 0.5f && usage[r] <= 2.f;
        for (std::size_t k = 0; k < dim; ++k) decoded.push_back(sum[r * dim + k] / std::max(usage[r], 1e-5f));
    }
    CHECK(dead + live_in_range == usage.size());
    CHECK(dead > usage.size() * 3 / 100);
    CHECK(dead < usage.size() * 7 / 100);
    CHECK(moments_of(decoded).std == Approx(1.0).epsilon(0.05));

    auto within = [](const std::vector<float>& v, float low, float high) {
        return std::all_of(v.begin(), v.end(), [&](float x) { return x >= low && x <= high; });
    };
    CHECK(within(vocoder(tn::voc_pt_attn_scale(1)), 0.05f, 0.2f));
    CHECK(within(vocoder(tn::voc_upsample(0, convnext_tensor::gamma)), 0.1f, 0.3f));
    auto snake = moments_of(vocoder(tn::voc_block_residual(2, 1, residual_tensor::act1_alpha)));
    CHECK(snake.std < 0.2);
}

TEST_CASE("the reference generator runs on a tiny checkpoint with sane logits") {
    temp_dir dir("generate");
    make(checkpoint_shape::tiny, 5, dir.path);
    auto c = checkpoint::open(dir.path.string());
    REQUIRE(c.ok());
    const auto& config = c->config();
    const auto talker = load_talker_weights(*c);
    const auto cp = load_code_predictor_weights(*c);
    auto tokenizer = bpe_tokenizer::load(dir.path.string());
    INFO((tokenizer ? "" : tokenizer.err().message));
    REQUIRE(tokenizer.ok());
    auto ids = tokenize_tts_prompt(*tokenizer, "A random checkpoint speaks.");
    REQUIRE(ids.ok());
    auto plan = build_prompt(config, ids->ids, "ryan", "english", text_layout::non_streaming);
    REQUIRE(plan.ok());

    for (bool greedy : {true, false}) {
        INFO("greedy " << greedy);
        ref::generation_trace trace;
        ref::generator gen(talker, cp, make_generation_options(config, {.greedy = greedy, .seed = 11}), &trace);
        gen.prefill(plan->rows);
        constexpr int k_frames = 10;
        for (int t = 0; t < k_frames; ++t) {
            auto frame = gen.next_frame(plan->text_track(t));
            REQUIRE(frame.has_value());
            const auto codes = std::span(*frame).first(static_cast<std::size_t>(config.talker.num_code_groups));
            CHECK(std::all_of(codes.begin(), codes.end(),
                              [&](std::int32_t id) { return id >= 0 && id < config.code_predictor.vocab; }));
        }
        auto sane = [](const std::vector<float>& v) {
            return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x) && std::abs(x) < 100.f; });
        };
        CHECK(sane(trace.logits_raw));
        CHECK(moments_of(trace.logits_raw).std > 0.3);  // O(1): the hidden state carries signal into the head
        for (const auto& frame_logits : trace.cp_logits) CHECK(sane(frame_logits));
    }
}

TEST_CASE("the full shapes' configs are the published ones, marked synthetic") {
    for (auto [shape, model] : {std::pair{checkpoint_shape::cv_0b6, "Qwen3-TTS-12Hz-0.6B-CustomVoice"},
                                std::pair{checkpoint_shape::cv_1b7, "Qwen3-TTS-12Hz-1.7B-CustomVoice"}}) {
        DYNAMIC_SECTION(model) {
            temp_dir dir("full");
            auto written = write_checkpoint_configs(options(shape, 1, dir.path));
            INFO((written ? "" : written.err().message));
            REQUIRE(written.ok());
            auto real = model_config::load(published(model).string());
            REQUIRE(real.ok());

            // Byte for byte, but for the marker line.
            auto text = file_bytes(dir.path / "config.json");
            const std::string marker = std::string("\n  \"") + synthetic_marker_key + "\": true,";
            REQUIRE(text.find(marker) == 1);
            CHECK(text.erase(1, marker.size()) == file_bytes(published(model) / "config.json"));
            for (const char* f : {"generation_config.json", "preprocessor_config.json", "speech_tokenizer/config.json",
                                  "speech_tokenizer/preprocessor_config.json"})
                CHECK(file_bytes(dir.path / f) == file_bytes(published(model) / f));
            CHECK_FALSE(fs::exists(dir.path / "model.safetensors"));

            const auto& w = *written;
            CHECK(w.talker.body.layers == real->talker.body.layers);
            CHECK(w.talker.body.hidden == real->talker.body.hidden);
            CHECK(w.talker.body.intermediate == real->talker.body.intermediate);
            CHECK(w.talker.text_hidden == real->talker.text_hidden);
            CHECK(w.code_predictor.body.hidden == real->code_predictor.body.hidden);
            CHECK(w.code_predictor.has_projection == real->code_predictor.has_projection);
            CHECK(w.vocoder.decoder_dim == real->vocoder.decoder_dim);
            CHECK(w.vocoder.sliding_window == real->vocoder.sliding_window);

            // The tensor table over these configs gives the published parameter counts.
            auto params = [](const std::vector<tensor_spec>& specs) {
                std::int64_t n = 0;
                for (const auto& s : specs) {
                    std::int64_t k = 1;
                    for (auto d : s.shape) k *= d;
                    n += k;
                }
                return n;
            };
            CHECK(params(vocoder_tensor_specs(w)) == 114'323'137);
            if (shape == checkpoint_shape::cv_0b6)
                CHECK(std::abs(static_cast<double>(params(model_tensor_specs(w))) - 905.8e6) < 0.05e6);
        }
    }
}

TEST_CASE("an existing non-empty directory is refused and left alone") {
    temp_dir dir("occupied");
    fs::create_directories(dir.path);
    std::ofstream(dir.path / "model.safetensors") << "real weights";
    auto r = make_random_checkpoint(options(checkpoint_shape::tiny, 1, dir.path));
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::invalid_input);
    CHECK_THAT(r.err().message, Catch::Contains(dir.path.string()) && Catch::Contains("not empty"));
    CHECK(file_bytes(dir.path / "model.safetensors") == "real weights");
}

TEST_CASE("a failure names the missing file and removes what was written") {
    temp_dir dir("no-data");
    auto o = options(checkpoint_shape::tiny, 1, dir.path);
    o.data_dir = (dir.path.parent_path() / "megatts-no-such-data-dir").string();
    auto r = make_random_checkpoint(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::not_found);
    CHECK_THAT(r.err().message, Catch::Contains("config.json"));
    CHECK_FALSE(fs::exists(dir.path));

    // An empty directory that existed stays, empty.
    fs::create_directories(dir.path);
    REQUIRE_FALSE(make_random_checkpoint(o).ok());
    CHECK(fs::is_directory(dir.path));
    CHECK(fs::is_empty(dir.path));
}

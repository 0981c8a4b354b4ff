// config.json of every published checkpoint parses to the documented dimensions; missing
// keys are named errors; the class defaults are never used.
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "pipeline/model/json_file.h"
#include "pipeline/model/model_config.h"

using namespace megatts;

namespace {

std::string configs(const std::string& name) { return std::string(MEGATTS_DATA_DIR) + "/configs/" + name; }

// The published 0.6B config with `edit` applied to one of its files (0: config.json,
// 1: generation_config.json, 2: speech_tokenizer/config.json); the error it gets.
std::string error_after(int file, const std::function<void(nlohmann::json&)>& edit) {
    const auto dir = configs("Qwen3-TTS-12Hz-0.6B-CustomVoice");
    std::vector<json_file> files;
    for (const char* name : {"/config.json", "/generation_config.json", "/speech_tokenizer/config.json"}) {
        auto read = json_file::read(dir + name);
        REQUIRE(read.ok());
        auto root = read->root();
        if (files.size() == static_cast<std::size_t>(file)) edit(root);
        auto edited = json_file::parse(root.dump(), name + 1);
        REQUIRE(edited.ok());
        files.push_back(std::move(*edited));
    }
    auto c = model_config::parse(files[0], files[1], files[2]);
    REQUIRE_FALSE(c.ok());
    CHECK(c.err().kind == error_kind::invalid_input);
    return c.err().message;
}

}  // namespace

TEST_CASE("the published 0.6B CustomVoice config") {
    auto c = model_config::load(configs("Qwen3-TTS-12Hz-0.6B-CustomVoice"));
    INFO((c ? "" : c.err().message));
    REQUIRE(c.ok());
    CHECK(c->kind == model_kind::custom_voice);
    CHECK(c->talker.body.layers == 28);
    CHECK(c->talker.body.hidden == 1024);
    CHECK(c->talker.body.intermediate == 3072);
    CHECK(c->talker.body.q_width() == 2048);
    CHECK(c->talker.body.rope_theta == 1e6f);
    CHECK(c->talker.text_hidden == 2048);
    CHECK(c->talker.codec_vocab == 3072);
    CHECK(c->code_predictor.body.layers == 5);
    CHECK(c->code_predictor.steps() == 15);
    CHECK_FALSE(c->code_predictor.has_projection);
    CHECK(c->codec_ids.eos == 2150);
    CHECK(c->codec_ids.pad == 2148);
    CHECK(c->text_ids.tts_pad == 151671);
    CHECK(c->speakers.at("ryan") == 3061);
    CHECK(c->languages.at("english") == 2050);
    CHECK(c->speaker_dialect.at("dylan") == "beijing_dialect");
    CHECK(c->sampling.repetition_penalty == Approx(1.05f));
    CHECK(c->sampling.top_k == 50);
    CHECK(c->vocoder.sliding_window == 72);
    CHECK(c->vocoder.samples_per_frame() == 1920);
    CHECK(c->vocoder.decoder_dim == 1536);
}

TEST_CASE("the published 1.7B CustomVoice and 0.6B Base configs") {
    auto big = model_config::load(configs("Qwen3-TTS-12Hz-1.7B-CustomVoice"));
    REQUIRE(big.ok());
    CHECK(big->talker.body.hidden == 2048);
    CHECK(big->talker.body.intermediate == 6144);
    CHECK(big->code_predictor.body.hidden == 1024);
    CHECK(big->code_predictor.has_projection);
    CHECK(big->code_predictor.embed_width == 2048);

    auto base = model_config::load(configs("Qwen3-TTS-12Hz-0.6B-Base"));
    REQUIRE(base.ok());
    CHECK(base->kind == model_kind::base);
    CHECK(base->speakers.empty());
}

TEST_CASE("a missing key is an error naming the file and the key") {
    namespace fs = std::filesystem;
    auto dir = fs::temp_directory_path() / "megatts-test-config";
    fs::remove_all(dir);
    fs::create_directories(dir / "speech_tokenizer");
    auto src = fs::path(configs("Qwen3-TTS-12Hz-0.6B-CustomVoice"));
    fs::copy_file(src / "generation_config.json", dir / "generation_config.json");
    fs::copy_file(src / "speech_tokenizer/config.json", dir / "speech_tokenizer/config.json");
    std::ifstream in(src / "config.json");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find("\"num_hidden_layers\": 28");
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string("\"num_hidden_layers\": 28").size(), "\"num_hidden_layers_x\": 28");
    std::ofstream(dir / "config.json") << text;

    auto c = model_config::load(dir.string());
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(c.err().message, Catch::Contains("config.json"));
    CHECK_THAT(c.err().message, Catch::Contains("talker_config.num_hidden_layers"));
    fs::remove_all(dir);

    auto missing = model_config::load("/nonexistent-model");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.err().kind == error_kind::not_found);
}

TEST_CASE("sizes beyond any real model, and values beyond 32 bits, are errors naming file and key") {
    // Each of these once crashed fuzz/model_config: a table of 2^31 layers (out of memory),
    // heads * head_dim and the vocoder's samples per frame overflowing int.
    CHECK_THAT(error_after(0, [](auto& j) { j["talker_config"]["num_hidden_layers"] = 2147483647; }),
               Catch::Contains("config.json: key 'talker_config.num_hidden_layers' must be an integer in 1..1024"));
    CHECK_THAT(error_after(0, [](auto& j) {
                   j["talker_config"]["num_attention_heads"] = 65536;
                   j["talker_config"]["num_key_value_heads"] = 65536;
                   j["talker_config"]["head_dim"] = 65536;
               }),
               Catch::Contains("talker_config.num_attention_heads' times head_dim must be at most 1048576"));
    CHECK_THAT(error_after(2, [](auto& j) { j["decoder_config"]["upsample_rates"] = {1048576, 8, 8, 8}; }),
               Catch::Contains("speech_tokenizer/config.json: key 'decoder_config.upsample_rates' make more than"));
    CHECK_THAT(error_after(2, [](auto& j) { j["decoder_config"]["decoder_dim"] = 1000; }),
               Catch::Contains("decoder_config.decoder_dim' must be a multiple of 16"));
    CHECK_THAT(error_after(1, [](auto& j) { j["top_k"] = 4294967346LL; }),
               Catch::Contains("generation_config.json: key 'top_k' does not fit in 32 bits"));
    CHECK_THAT(error_after(0, [](auto& j) { j["talker_config"]["spk_id"]["ryan"] = -1; }),
               Catch::Contains("talker_config.spk_id.ryan' must be an integer id"));
    // And the fuzzer's first find: errors of a transformer's shape name the file too.
    CHECK_THAT(error_after(0, [](auto& j) { j["talker_config"]["head_dim"] = 127; }),
               Catch::StartsWith("config.json: key 'talker_config.head_dim' must be even"));
}

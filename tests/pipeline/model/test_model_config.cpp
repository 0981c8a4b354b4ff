// config.json of every published checkpoint parses to the documented dimensions; missing
// keys are named errors; the class defaults are never used.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "pipeline/model/model_config.h"

using namespace megatts;

namespace {

std::string configs(const std::string& name) { return std::string(MEGATTS_DATA_DIR) + "/configs/" + name; }

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

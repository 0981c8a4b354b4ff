// checkpoint::open validates every tensor against the table; each way a checkpoint can
// disagree with its config is a named error.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "pipeline/model/checkpoint.h"
#include "pipeline/model/tensor_names.h"

using namespace megatts;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return std::string(MEGATTS_FIXTURE_DIR) + "/" + name; }

// A copy of tiny-cv06 whose config.json or model.safetensors the test then damages.
fs::path copy_of_tiny(const std::string& tag) {
    auto dir = fs::temp_directory_path() / ("megatts-ckpt-" + tag);
    fs::remove_all(dir);
    fs::create_directories(dir / "speech_tokenizer");
    auto src = fs::path(fixture("tiny-cv06"));
    for (const char* f : {"config.json", "generation_config.json", "model.safetensors",
                          "speech_tokenizer/config.json", "speech_tokenizer/model.safetensors"})
        fs::copy_file(src / f, dir / f);
    return dir;
}

void replace_in_file(const fs::path& p, const std::string& from, const std::string& to) {
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    in.close();
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    std::ofstream(p, std::ios::binary) << text;
}

std::string open_error(const fs::path& dir) {
    auto c = checkpoint::open(dir.string());
    REQUIRE_FALSE(c.ok());
    return c.err().message;
}

}  // namespace

TEST_CASE("golden tiny checkpoints open and validate") {
    for (const char* name : {"tiny-cv06", "tiny-cv17"}) {
        auto c = checkpoint::open(fixture(name));
        INFO(name << ": " << (c ? "" : c.err().message));
        REQUIRE(c.ok());
        CHECK(c->config().code_predictor.has_projection == (std::string(name) == "tiny-cv17"));
        CHECK(c->model_file().tensors().size() == model_tensor_specs(c->config()).size());
    }
}

TEST_CASE("a config that contradicts the weights names the tensor and both shapes") {
    auto dir = copy_of_tiny("contradict");
    replace_in_file(dir / "config.json", "\"intermediate_size\": 96,\n    \"max_position", "\"intermediate_size\": 80,\n    \"max_position");
    auto msg = open_error(dir);
    CHECK_THAT(msg, Catch::Contains("talker.model.layers.0.mlp.gate_proj.weight"));
    CHECK_THAT(msg, Catch::Contains("[96, 32]"));
    CHECK_THAT(msg, Catch::Contains("[80, 32]"));
    fs::remove_all(dir);
}

TEST_CASE("a missing tensor, a wrong dtype and an unknown tensor are named") {
    auto missing = copy_of_tiny("missing");
    replace_in_file(missing / "model.safetensors", "talker.codec_head.weight", "talker.codec_hexd.weight");
    auto msg = open_error(missing);
    CHECK_THAT(msg, Catch::Contains("missing tensor 'talker.codec_head.weight'"));
    fs::remove_all(missing);

    auto dtype = copy_of_tiny("dtype");
    // Same byte length, other dtype: BF16 -> F16.
    replace_in_file(dtype / "model.safetensors",
                    R"("talker.model.norm.weight":{"dtype":"BF16")", R"("talker.model.norm.weight":{"dtype":"F16" )");
    msg = open_error(dtype);
    CHECK_THAT(msg, Catch::Contains("talker.model.norm.weight"));
    CHECK_THAT(msg, Catch::Contains("dtype F16, expected BF16"));
    fs::remove_all(dtype);
}

TEST_CASE("a truncated weights file is an error naming the file") {
    auto dir = copy_of_tiny("truncated");
    auto p = dir / "speech_tokenizer/model.safetensors";
    fs::resize_file(p, fs::file_size(p) - 1000);
    auto msg = open_error(dir);
    CHECK_THAT(msg, Catch::Contains("speech_tokenizer/model.safetensors"));
    CHECK_THAT(msg, Catch::Contains("truncated"));
    fs::remove_all(dir);
}

TEST_CASE("a missing directory is not_found") {
    auto c = checkpoint::open("/nonexistent-model-dir");
    REQUIRE_FALSE(c.ok());
    CHECK(c.err().kind == error_kind::not_found);
}

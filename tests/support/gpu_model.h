// gpu_model: the full-size checkpoint the gpu suite runs on: MEGATTS_GPU_MODEL names
// a directory; else a make-checkpoint 0.6B random checkpoint is written once to
// /tmp/megatts-gpu-0.6b (about 2.3 GB, a few minutes) and reused by later runs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "pipeline/model/random_checkpoint.h"

namespace megatts::test {

inline std::string gpu_model_dir() {
    if (const char* env = std::getenv("MEGATTS_GPU_MODEL")) return env;
    const std::string dir = "/tmp/megatts-gpu-0.6b";
    if (!std::filesystem::exists(dir + "/model.safetensors") ||
        !std::filesystem::exists(dir + "/speech_tokenizer/model.safetensors")) {
        std::filesystem::remove_all(dir);
        auto made = make_random_checkpoint(
            {.shape = checkpoint_shape::cv_0b6, .seed = 7, .out_dir = dir, .data_dir = MEGATTS_DATA_DIR});
        INFO((made ? "" : made.err().message));
        REQUIRE(made.ok());
    }
    return dir;
}

}  // namespace megatts::test

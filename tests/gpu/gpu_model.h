// The full-size 0.6B checkpoint the gpu suite runs on: MEGATTS_GPU_MODEL names one, else a
// make-checkpoint random checkpoint written once to /tmp/megatts-gpu-0.6b.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "pipeline/model/random_checkpoint.h"

namespace megatts::test {

inline std::string gpu_model_dir() {
    if (const char* env = std::getenv("MEGATTS_GPU_MODEL")) return env;
    const std::string dir = "/tmp/megatts-gpu-0.6b";
    if (!std::filesystem::exists(dir + "/model.safetensors")) {
        std::filesystem::remove_all(dir);
        auto made = make_random_checkpoint(
            {.shape = checkpoint_shape::cv_0b6, .seed = 7, .out_dir = dir, .data_dir = MEGATTS_DATA_DIR});
        INFO((made ? "" : made.err().message));
        REQUIRE(made.ok());
    }
    return dir;
}

}  // namespace megatts::test

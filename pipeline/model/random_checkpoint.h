// random_checkpoint: the library behind `megatts make-checkpoint`: a checkpoint
// directory in exactly the Hugging Face layout (DESIGN.md §3) with seeded random
// weights, for tests, the demo and GPU benchmarks, since real weights cannot be
// downloaded here.
//
// Contract: make_random_checkpoint() writes into `out_dir`, which must not exist or
// be empty (so real weights are never overwritten): config.json,
// generation_config.json, preprocessor_config.json, the tokenizer files,
// speech_tokenizer/{config.json, preprocessor_config.json, model.safetensors (F32,
// decoder only)} and model.safetensors (BF16), every tensor of the tensor-name
// table and nothing else. The full shapes copy the published files from
// `data_dir`/configs byte for byte, except that config.json gains the top-level key
// `synthetic_marker_key` = true; the tiny shape shrinks the 0.6B-CustomVoice config
// like the golden tiny-cv06 checkpoint. Weights are a pure function of (shape,
// seed): the same on every run, thread count and machine (random_checkpoint.cpp
// states the one libm caveat). Their scales give every path O(1) signal (the recipe
// of the golden checkpoints in tests/fixtures, residual branches scaled for depth).
// Blocking: the 0.6B shape's ~1 G values take about 23 s of CPU time, spread over
// all hardware threads, and are streamed to disk (memory stays at a few MB per
// thread). Errors name the file; on failure `out_dir` is removed again (or emptied,
// if it existed). Any thread; concurrent calls need distinct out_dirs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/common/result.h"
#include "pipeline/model/model_config.h"

namespace megatts {

// tiny: talker 2 layers x 32 wide (runs in milliseconds on the CPU reference);
// the others: the published 0.6B / 1.7B CustomVoice dimensions.
enum class checkpoint_shape { tiny, cv_0b6, cv_1b7 };

struct random_checkpoint_options {
    checkpoint_shape shape = checkpoint_shape::tiny;
    std::uint64_t seed = 0;
    std::string out_dir;
    std::string data_dir;  // holds configs/<published model>/ and tokenizer/
};

// config.json key that marks a checkpoint as synthetic, so the daemon can label it.
inline constexpr const char* synthetic_marker_key = "megatts_synthetic";

// "tiny", "0.6b-customvoice", "1.7b-customvoice" (the CLI spelling).
std::optional<checkpoint_shape> parse_checkpoint_shape(std::string_view name);
std::string_view checkpoint_shape_name(checkpoint_shape shape);

// Writes everything but the two weight files and returns the config as
// model_config::load reads it back; the directory then lacks only the weights.
result<model_config> write_checkpoint_configs(const random_checkpoint_options& options);

// The whole checkpoint: the files above plus both weight files.
result<void> make_random_checkpoint(const random_checkpoint_options& options);

}  // namespace megatts

// command_make_checkpoint: `megatts make-checkpoint`: a checkpoint with seeded random
// weights in exactly the Hugging Face layout (pipeline/model/random_checkpoint.h):
// tiny for tests and the embedded default, the full 0.6B / 1.7B shapes for GPU
// benchmarks. Refuses to write into a non-empty directory. Exit 2 on user errors.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_make_checkpoint_command(CLI::App& app, int& exit_code);

}  // namespace megatts

// command_say: `megatts say`: one utterance from the command line into a WAV or Ogg
// Opus file (and optionally its codes as JSON), printing the time of every stage.
// --backend cpu runs the reference; --backend cuda runs the talker and code predictor
// in the megakernel (the vocoder stays on the CPU reference until it has a CUDA
// path) or refuses with the exact reason CUDA cannot run. Exit 2 on user errors.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_say_command(CLI::App& app, int& exit_code);

}  // namespace megatts

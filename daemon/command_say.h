// command_say: `megatts say`: one utterance from the command line into a WAV or Ogg
// Opus file (and optionally its codes as JSON), printing the time of every stage.
// Runs the CPU reference backend; --backend cuda is checked against the machine and
// refused with the exact reason when it cannot run. Exit 2 on user errors.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_say_command(CLI::App& app, int& exit_code);

}  // namespace megatts

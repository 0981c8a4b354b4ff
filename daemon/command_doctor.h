// command_doctor: `megatts doctor`: what this machine and binary can run. Prints CUDA
// devices, compute capability, driver and runtime versions, the architectures in
// this binary, and whether the configured model exists and fits on the device.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_doctor_command(CLI::App& app, int& exit_code);

}  // namespace megatts

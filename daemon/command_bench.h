// command_bench: the `megatts bench` group (`bench load` is command_bench_load.h) and
// `megatts bench kernels`: the megakernel measured on this GPU in one
// run: the copy-bandwidth ceiling, the bytes a talker step and a whole frame must
// stream, and milliseconds per frame at each batch size (talker alone, then the whole
// frame), with achieved GB/s and percent of the ceiling. Needs a CUDA device; refuses
// with the reason otherwise. --json writes the figures with device, commit and date.
// `megatts bench vocoder` (command_bench_vocoder.h) is the other subcommand.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_bench_command(CLI::App& app, int& exit_code);

}  // namespace megatts

// command_bench_vocoder: `megatts bench vocoder`: the CUDA vocoder measured on this
// GPU: for each batch size, milliseconds per call (every session one frame, in
// steady state past the attention window), with the achieved GB/s against the
// measured copy ceiling and GFLOP/s, from the bytes and FLOPs a frame needs
// (kernels/vocoder/vocoder_cost.h, printed per stage). Needs a CUDA device; refuses
// with the reason otherwise. --json writes the figures with device, commit and date.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_bench_vocoder_command(CLI::App& bench, int& exit_code);

}  // namespace megatts

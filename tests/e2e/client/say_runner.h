// say_runner: `megatts say` as the reference that the server's audio is compared with: the same
// text, voice, language and seed (or greedy) must give the same samples.
//
// Contract: run_say runs `binary say ARGS -o DIR/NAME.wav --codes-out DIR/NAME-codes.json`
// (output in DIR/NAME.log) within `timeout` and returns the WAV's 16-bit samples (its data
// chunk, bytes) and the number of frames in the codes file. Errors: the command failing or
// timing out, or a WAV without the plain 44-byte header. Distinct names may run in parallel.
// Thread: any. Blocking: up to the timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::e2e {

struct say_output {
    std::vector<std::uint8_t> pcm16;  // the WAV's data chunk
    int frames = 0;
};

result<say_output> run_say(const std::string& binary, std::vector<std::string> args, const std::filesystem::path& dir,
                           const std::string& name, std::chrono::seconds timeout);

}  // namespace megatts::e2e

#include "tests/e2e/client/say_runner.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "tests/e2e/client/server_process.h"

namespace megatts::e2e {

result<say_output> run_say(const std::string& binary, std::vector<std::string> args, const std::filesystem::path& dir,
                           const std::string& name, std::chrono::seconds timeout) {
    const auto wav = dir / (name + ".wav");
    const auto codes = dir / (name + "-codes.json");
    args.insert(args.begin(), "say");
    args.insert(args.end(), {"-o", wav.string(), "--codes-out", codes.string()});
    auto status = run_command(binary, args, timeout, dir / (name + ".log"));
    if (!status) return status.err();
    if (*status != 0)
        return make_error(error_kind::internal, "megatts say exited " + std::to_string(*status) + "; see " +
                                                    (dir / (name + ".log")).string());
    std::ifstream in(wav, std::ios::binary);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    // RIFF header, fmt chunk (16 bytes for PCM), data chunk: the samples start at byte 44.
    if (bytes.size() < 44 || std::string(bytes.begin() + 36, bytes.begin() + 40) != "data")
        return make_error(error_kind::mismatch, wav.string() + ": not a plain 16-bit WAV");
    say_output out;
    out.pcm16.assign(bytes.begin() + 44, bytes.end());
    const auto parsed = nlohmann::json::parse(std::ifstream(codes), nullptr, false);
    if (!parsed.is_array()) return make_error(error_kind::mismatch, codes.string() + ": not a JSON array");
    out.frames = static_cast<int>(parsed.size());
    return out;
}

}  // namespace megatts::e2e

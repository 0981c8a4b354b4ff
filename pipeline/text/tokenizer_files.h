// Reading a tokenizer file whole: vocab.json, merges.txt, tokenizer_config.json.
//
// In: a path. Out: the file's bytes, or its parsed JSON. Thread: any. Blocking: file I/O.
// Errors: not_found when the file does not exist, io when it cannot be read, invalid_input when
// JSON does not parse. Every message starts with the path.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kernels/common/result.h"

namespace megatts {

result<std::string> read_tokenizer_file(const std::filesystem::path& path);

result<nlohmann::json> read_tokenizer_json(const std::filesystem::path& path);

}  // namespace megatts

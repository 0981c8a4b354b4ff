// json_file: a parsed JSON document that remembers which file it came from, with
// typed look-ups by dotted key path ("talker_config.hidden_size").
//
// Contract: read() fails with a named error for a missing or malformed file; the
// typed getters fail with an error naming the file and the full key when the key
// is absent or has the wrong type. No exceptions escape. Read-only after read().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernels/common/result.h"

namespace megatts {

class json_file {
public:
    static result<json_file> read(const std::string& path);
    static result<json_file> parse(std::string_view text, std::string label);

    const std::string& path() const { return path_; }
    const nlohmann::json& root() const { return root_; }

    // The node at a dotted key path, or nullptr when any part is absent.
    const nlohmann::json* find(std::string_view key) const;

    result<std::int64_t> get_int(std::string_view key) const;
    result<double> get_number(std::string_view key) const;
    result<bool> get_bool(std::string_view key) const;
    result<std::string> get_string(std::string_view key) const;
    result<const nlohmann::json*> get_object(std::string_view key) const;
    result<const nlohmann::json*> get_array(std::string_view key) const;

    error key_error(std::string_view key, std::string_view what) const;

private:
    std::string path_;
    nlohmann::json root_;
};

}  // namespace megatts

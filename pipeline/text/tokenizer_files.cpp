#include "pipeline/text/tokenizer_files.h"

#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace megatts {

result<std::string> read_tokenizer_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) {
        return make_error(error_kind::not_found, path.string() + ": no such file");
    }
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    std::ifstream in(path, std::ios::binary);
    if (ec || !in) {
        return make_error(error_kind::io, path.string() + ": cannot be read" +
                                              (ec ? " (" + ec.message() + ")" : ""));
    }
    std::string bytes(size, '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
        return make_error(error_kind::io, path.string() + ": read failed");
    }
    return bytes;
}

result<nlohmann::json> read_tokenizer_json(const std::filesystem::path& path) {
    auto bytes = read_tokenizer_file(path);
    if (!bytes) return bytes.err();
    try {
        return nlohmann::json::parse(*bytes);
    } catch (const nlohmann::json::parse_error& e) {
        return make_error(error_kind::invalid_input, path.string() + ": " + e.what());
    }
}

}  // namespace megatts

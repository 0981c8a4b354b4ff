#include "pipeline/model/json_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace megatts {

result<json_file> json_file::read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return make_error(errno == ENOENT ? error_kind::not_found : error_kind::io,
                          path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

result<json_file> json_file::parse(std::string_view text, std::string label) {
    json_file file;
    file.path_ = std::move(label);
    file.root_ = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (file.root_.is_discarded() || !file.root_.is_object())
        return make_error(error_kind::invalid_input, file.path_ + ": not a JSON object");
    return file;
}

const nlohmann::json* json_file::find(std::string_view key) const {
    const nlohmann::json* node = &root_;
    while (!key.empty()) {
        auto dot = key.find('.');
        auto part = key.substr(0, dot);
        if (!node->is_object()) return nullptr;
        auto it = node->find(part);
        if (it == node->end()) return nullptr;
        node = &*it;
        key = dot == std::string_view::npos ? std::string_view{} : key.substr(dot + 1);
    }
    return node;
}

error json_file::key_error(std::string_view key, std::string_view what) const {
    return make_error(error_kind::invalid_input,
                      path_ + ": key '" + std::string(key) + "' " + std::string(what));
}

result<std::int64_t> json_file::get_int(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_number_integer()) return key_error(key, "must be an integer");
    return node->get<std::int64_t>();
}

result<double> json_file::get_number(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_number()) return key_error(key, "must be a number");
    return node->get<double>();
}

result<bool> json_file::get_bool(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_boolean()) return key_error(key, "must be true or false");
    return node->get<bool>();
}

result<std::string> json_file::get_string(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_string()) return key_error(key, "must be a string");
    return node->get<std::string>();
}

result<const nlohmann::json*> json_file::get_object(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_object()) return key_error(key, "must be an object");
    return node;
}

result<const nlohmann::json*> json_file::get_array(std::string_view key) const {
    const auto* node = find(key);
    if (!node || node->is_null()) return key_error(key, "is missing");
    if (!node->is_array()) return key_error(key, "must be an array");
    return node;
}

}  // namespace megatts

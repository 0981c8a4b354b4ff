#include "tests/pipeline/text/tiny_tokenizer_dir.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

namespace megatts::test {
namespace {

bool printable(unsigned byte) {
    return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

// Written out from the GPT-2 rule rather than shared with the tokenizer, so that a mistake in
// either one shows up as a test failure: printable bytes spell themselves, the n-th other byte
// spells U+0100 + n.
std::string spelling_of_byte(unsigned byte) {
    unsigned code_point = byte;
    if (!printable(byte)) {
        code_point = 0x100;
        for (unsigned before = 0; before < byte; ++before) code_point += printable(before) ? 0 : 1;
    }
    std::string utf8;
    if (code_point < 0x80) {
        utf8.push_back(static_cast<char>(code_point));
    } else {
        utf8.push_back(static_cast<char>(0xC0 | code_point >> 6));
        utf8.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    }
    return utf8;
}

}  // namespace

std::string byte_level_spelling(std::string_view bytes) {
    std::string spelled;
    for (const char byte : bytes) spelled += spelling_of_byte(static_cast<unsigned char>(byte));
    return spelled;
}

tiny_tokenizer_dir::tiny_tokenizer_dir(
    const std::vector<std::string>& extra_tokens,
    const std::vector<std::pair<std::string, std::string>>& merges,
    const std::vector<std::pair<std::string, int>>& added_tokens) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("megatts-tokenizer-" + std::to_string(std::random_device{}()) + "-" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);

    nlohmann::json vocab = nlohmann::json::object();
    for (int byte = 0; byte < 256; ++byte) {
        vocab[byte_level_spelling(std::string(1, static_cast<char>(byte)))] = byte;
    }
    for (std::size_t i = 0; i < extra_tokens.size(); ++i) {
        vocab[byte_level_spelling(extra_tokens[i])] = 256 + i;
    }
    write("vocab.json", vocab.dump());

    std::string merge_lines = "#version: 0.2\n";
    for (const auto& [left, right] : merges) {
        merge_lines += byte_level_spelling(left) + " " + byte_level_spelling(right) + "\n";
    }
    write("merges.txt", merge_lines);

    nlohmann::json config = {{"tokenizer_class", "Qwen2Tokenizer"},
                             {"added_tokens_decoder", nlohmann::json::object()}};
    for (const auto& [content, id] : added_tokens) {
        config["added_tokens_decoder"][std::to_string(id)] = {
            {"content", content}, {"lstrip", false},      {"normalized", false},
            {"rstrip", false},    {"single_word", false}, {"special", true}};
    }
    write("tokenizer_config.json", config.dump());
}

tiny_tokenizer_dir::~tiny_tokenizer_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

void tiny_tokenizer_dir::write(const std::string& file, std::string_view contents) const {
    std::ofstream out(path_ / file, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    REQUIRE(out.good());
}

void tiny_tokenizer_dir::remove(const std::string& file) const {
    REQUIRE(std::filesystem::remove(path_ / file));
}

}  // namespace megatts::test

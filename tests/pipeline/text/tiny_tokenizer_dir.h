// A scratch tokenizer directory for tests that need small or broken tokenizer files: a
// byte-level vocab.json (the 256 single-byte tokens, then extra tokens), merges.txt and
// tokenizer_config.json, written into a fresh temporary directory that is removed again on
// destruction. Files can be overwritten or deleted to make them malformed or missing.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace megatts::test {

// GPT-2's byte-to-unicode spelling of raw bytes, as vocab.json and merges.txt write tokens.
std::string byte_level_spelling(std::string_view bytes);

class tiny_tokenizer_dir {
public:
    // `extra_tokens` (raw bytes) get ids 256, 257, ...; `merges` are pairs of raw-byte tokens,
    // in rank order; `added_tokens` are (content, id) pairs.
    tiny_tokenizer_dir(const std::vector<std::string>& extra_tokens,
                       const std::vector<std::pair<std::string, std::string>>& merges,
                       const std::vector<std::pair<std::string, int>>& added_tokens);
    ~tiny_tokenizer_dir();
    tiny_tokenizer_dir(const tiny_tokenizer_dir&) = delete;
    tiny_tokenizer_dir& operator=(const tiny_tokenizer_dir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    void write(const std::string& file, std::string_view contents) const;
    void remove(const std::string& file) const;

private:
    std::filesystem::path path_;
};

}  // namespace megatts::test

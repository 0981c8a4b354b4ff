// added_token_set: the tokens of tokenizer_config.json's added_tokens_decoder ("<|im_start|>",
// "<tts_pad>", "<think>", ...), which the tokenizer matches verbatim in raw text before any
// normalization or regex split, as Hugging Face's AddedVocabulary does: at the leftmost position
// where one matches, the longest one wins.
//
// In: (content, id) pairs. Out: matches in text, lookups by content or id.
// Thread: immutable after create(); every method is const and safe on many threads at once.
// Blocking: never. Errors: create() rejects (invalid_input) empty contents and contents or ids
// that occur twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

class added_token_set {
public:
    struct match {
        std::size_t begin;
        std::size_t length;
        std::int32_t id;
    };

    static result<added_token_set> create(std::vector<std::pair<std::string, std::int32_t>> tokens);

    // The first match in text[from..].
    std::optional<match> find(std::string_view text, std::size_t from) const;

    // The first position p >= from at which text[p..] is a proper prefix of some token, i.e.
    // where more text could still complete a match; text.size() if there is none. A match that
    // find() reports before this position is final whatever follows.
    std::size_t open_prefix_start(std::string_view text, std::size_t from) const;

    std::optional<std::int32_t> id(std::string_view content) const;
    std::optional<std::string_view> content(std::int32_t id) const;

private:
    explicit added_token_set(std::vector<std::pair<std::string, std::int32_t>> longest_first);

    std::vector<std::pair<std::string, std::int32_t>> tokens_;  // longest first
    std::size_t longest_ = 0;
};

}  // namespace megatts

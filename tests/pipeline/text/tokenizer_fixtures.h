// Shared by the tokenizer tests: the real Qwen3-TTS tokenizer (loaded once per test binary) and
// the oracle cases of tests/fixtures/tokenizer_cases.json (see golden/README.md, "Tokenizer
// golden").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/text/bpe_tokenizer.h"

namespace megatts::test {

struct tokenizer_case {
    std::string text;
    std::vector<std::int32_t> ids;
};

// Fails the calling test (REQUIRE) if the tokenizer does not load.
const bpe_tokenizer& qwen_tokenizer();

// The 50 `cases`.
const std::vector<tokenizer_case>& golden_cases();

// The `template_examples`: full TTS prompt texts and their ids.
const std::vector<tokenizer_case>& template_examples();

// The texts of `third_party_check`, whose ids the official-template examples must reproduce.
const std::vector<std::string>& third_party_texts();

}  // namespace megatts::test

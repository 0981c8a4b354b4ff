#include "pipeline/text/tts_prompt_ids.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/pipeline/text/tokenizer_fixtures.h"

namespace megatts {
namespace {

using ids = std::vector<std::int32_t>;

constexpr std::int32_t im_start = 151644;
constexpr std::int32_t im_end = 151645;
constexpr std::int32_t assistant = 77091;
constexpr std::int32_t newline = 198;
constexpr std::int32_t two_newlines = 271;

const ids role_prefix{im_start, assistant, newline};
const ids template_tail{im_end, newline, im_start, assistant, newline};

TEST_CASE("tokenize_tts_prompt reproduces the template examples", "[tokenizer]") {
    const auto& examples = test::template_examples();
    REQUIRE(examples.size() == 2);
    for (const auto& example : examples) {
        INFO("text: " << example.text);
        auto prompt = tokenize_tts_prompt(test::qwen_tokenizer(), example.text);
        REQUIRE(prompt.ok());
        CHECK(prompt->ids == example.ids);
        CHECK(prompt->role_ids == role_prefix);
        CHECK(prompt->text_ids == ids(example.ids.begin() + 3, example.ids.end() - 5));
        CHECK(ids(prompt->ids.end() - 5, prompt->ids.end()) == template_tail);
    }
}

TEST_CASE("tokenize_tts_prompt reproduces the third-party test vectors", "[tokenizer]") {
    // cv_text_ids.npy and e2e_text_ids.npy of Qwen3-TTS-ncnn hold the ids of these texts' full
    // templates, which the golden file records as the template examples.
    const auto& examples = test::template_examples();
    const auto& texts = test::third_party_texts();
    REQUIRE(texts.size() == 2);
    for (const std::string& text : texts) {
        INFO("text: " << text);
        const auto example = std::find_if(examples.begin(), examples.end(),
                                          [&](const auto& e) { return e.text == text; });
        REQUIRE(example != examples.end());
        auto prompt = tokenize_tts_prompt(test::qwen_tokenizer(), text);
        REQUIRE(prompt.ok());
        CHECK(prompt->ids == example->ids);
    }
}

TEST_CASE("tokenize_tts_prompt of empty text is the bare template", "[tokenizer]") {
    auto prompt = tokenize_tts_prompt(test::qwen_tokenizer(), "");
    REQUIRE(prompt.ok());
    CHECK(prompt->role_ids == role_prefix);
    CHECK(prompt->text_ids.empty());
    CHECK(prompt->ids.size() == 8);
}

TEST_CASE("tokenize_tts_prompt lets the text's whitespace merge with the template",
          "[tokenizer]") {
    // A leading newline joins the role's "\n" into one "\n\n" token, which the official slicing
    // keeps in the role.
    auto leading_newline = tokenize_tts_prompt(test::qwen_tokenizer(), "\nHi");
    REQUIRE(leading_newline.ok());
    CHECK(leading_newline->role_ids == ids{im_start, assistant, two_newlines});
    CHECK(leading_newline->text_ids == ids{13048});

    // Spaces at either end stay in the text: "  Hi there  " -> " ", " Hi", " there", "  ".
    auto spaces = tokenize_tts_prompt(test::qwen_tokenizer(), "  Hi there  ");
    REQUIRE(spaces.ok());
    CHECK(spaces->role_ids == role_prefix);
    CHECK(spaces->text_ids == ids{220, 21018, 1052, 256});
}

TEST_CASE("tokenize_tts_prompt rejects text that is not UTF-8", "[tokenizer]") {
    auto prompt = tokenize_tts_prompt(test::qwen_tokenizer(), "caf\xC3");
    REQUIRE_FALSE(prompt.ok());
    CHECK(prompt.err().kind == error_kind::invalid_input);
}

}  // namespace
}  // namespace megatts

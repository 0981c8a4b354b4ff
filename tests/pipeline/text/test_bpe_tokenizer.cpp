#include "pipeline/text/bpe_tokenizer.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/pipeline/text/tiny_tokenizer_dir.h"
#include "tests/pipeline/text/tokenizer_fixtures.h"

namespace megatts {
namespace {

using ids = std::vector<std::int32_t>;

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

TEST_CASE("bpe_tokenizer reproduces every golden case", "[tokenizer]") {
    const bpe_tokenizer& tokenizer = test::qwen_tokenizer();
    const auto& cases = test::golden_cases();
    REQUIRE(cases.size() == 50);
    for (const auto& c : cases) {
        INFO("text: " << c.text);
        auto encoded = tokenizer.encode(c.text);
        REQUIRE(encoded.ok());
        CHECK(*encoded == c.ids);
    }
}

TEST_CASE("bpe_tokenizer decodes the golden ids back to the NFC text", "[tokenizer]") {
    const bpe_tokenizer& tokenizer = test::qwen_tokenizer();
    for (const auto& c : test::golden_cases()) {
        INFO("text: " << c.text);
        auto decoded = tokenizer.decode(c.ids);
        REQUIRE(decoded.ok());
        // The one case not in NFC; decoding gives the composed form that was encoded.
        if (c.text == "cafe\xCC\x81 and re\xCC\x81sume\xCC\x81 (NFD input)") {
            CHECK(*decoded == "caf\xC3\xA9 and r\xC3\xA9sum\xC3\xA9 (NFD input)");
        } else {
            CHECK(*decoded == c.text);
        }
    }
}

TEST_CASE("bpe_tokenizer treats U+180E as a format character, not as whitespace",
          "[tokenizer]") {
    // Hugging Face (Oniguruma, Unicode White_Space) splits "\u180E." + "a"; PCRE2's own \s
    // would split "\u180E" + ".a" and give [123970, 236, 5849].
    auto encoded = test::qwen_tokenizer().encode("\xE1\xA0\x8E.a");
    REQUIRE(encoded.ok());
    CHECK(*encoded == ids{123970, 236, 13, 64});
}

TEST_CASE("bpe_tokenizer matches the longest added token at the leftmost position",
          "[tokenizer]") {
    auto encoded = test::qwen_tokenizer().encode("<tts_text_bos_single>x<tts_text_bos><|im_end");
    REQUIRE(encoded.ok());
    // "<|im_end" without "|>" is plain text.
    CHECK(*encoded == ids{151674, 87, 151672, 27, 91, 318, 6213});
}

TEST_CASE("bpe_tokenizer::decode replaces bytes that are not UTF-8 like Hugging Face",
          "[tokenizer]") {
    const bpe_tokenizer& tokenizer = test::qwen_tokenizer();
    // 61804 is " \xF0\x9F\x91", the first three bytes of U+1F468; 101 is its last byte.
    auto cut = tokenizer.decode(ids{61804});
    REQUIRE(cut.ok());
    CHECK(*cut == " \xEF\xBF\xBD");
    auto whole = tokenizer.decode(ids{61804, 101});
    REQUIRE(whole.ok());
    CHECK(*whole == " \xF0\x9F\x91\xA8");
    auto with_special = tokenizer.decode(ids{151644, 77091, 198});
    REQUIRE(with_special.ok());
    CHECK(*with_special == "<|im_start|>assistant\n");
}

TEST_CASE("bpe_tokenizer::decode rejects unknown ids", "[tokenizer]") {
    for (const std::int32_t bad : {-1, 151676, 1 << 30}) {
        auto decoded = test::qwen_tokenizer().decode(ids{9707, bad});
        REQUIRE_FALSE(decoded.ok());
        CHECK(decoded.err().kind == error_kind::invalid_input);
        CHECK(contains(decoded.err().message, std::to_string(bad)));
    }
}

TEST_CASE("bpe_tokenizer::token_id finds added tokens only", "[tokenizer]") {
    const bpe_tokenizer& tokenizer = test::qwen_tokenizer();
    CHECK(tokenizer.token_id("<|endoftext|>").value() == 151643);
    CHECK(tokenizer.token_id("<|im_start|>").value() == 151644);
    CHECK(tokenizer.token_id("<|im_end|>").value() == 151645);
    CHECK(tokenizer.token_id("<tts_pad>").value() == 151671);
    CHECK(tokenizer.token_id("<tts_text_bos>").value() == 151672);
    CHECK(tokenizer.token_id("<tts_text_eod>").value() == 151673);
    CHECK(tokenizer.token_id("<|audio_pad|>").value() == 151675);
    auto missing = tokenizer.token_id("Hello");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.err().kind == error_kind::not_found);
    CHECK(contains(missing.err().message, "Hello"));
}

TEST_CASE("bpe_tokenizer::encode rejects text that is not UTF-8", "[tokenizer]") {
    const std::string bad_texts[] = {
        "\xFF",
        "ok \xC3",            // cut two-byte sequence
        "\xC0\xAF",           // overlong '/'
        "\xED\xA0\x80",       // surrogate U+D800
        "\xF4\x90\x80\x80",   // above U+10FFFF
        "a<|im_end|>\x80",    // stray continuation byte after an added token
    };
    for (const std::string& text : bad_texts) {
        auto encoded = test::qwen_tokenizer().encode(text);
        REQUIRE_FALSE(encoded.ok());
        CHECK(encoded.err().kind == error_kind::invalid_input);
    }
}

TEST_CASE("bpe_tokenizer keeps NUL and other control characters", "[tokenizer]") {
    auto encoded = test::qwen_tokenizer().encode(std::string("a\0b", 3));
    REQUIRE(encoded.ok());
    CHECK(*encoded == ids{64, 188, 65});
}

TEST_CASE("bpe_tokenizer::load names the file that is missing", "[tokenizer]") {
    const test::tiny_tokenizer_dir dir({}, {}, {{"<x>", 256}});
    REQUIRE(bpe_tokenizer::load(dir.path().string()).ok());
    for (const std::string file : {"vocab.json", "merges.txt", "tokenizer_config.json"}) {
        const test::tiny_tokenizer_dir incomplete({}, {}, {{"<x>", 256}});
        incomplete.remove(file);
        auto loaded = bpe_tokenizer::load(incomplete.path().string());
        REQUIRE_FALSE(loaded.ok());
        CHECK(loaded.err().kind == error_kind::not_found);
        CHECK(contains(loaded.err().message, (incomplete.path() / file).string()));
    }
    auto nowhere = bpe_tokenizer::load("/nonexistent/megatts-tokenizer");
    REQUIRE_FALSE(nowhere.ok());
    CHECK(nowhere.err().kind == error_kind::not_found);
}

TEST_CASE("bpe_tokenizer::load names the file that is malformed", "[tokenizer]") {
    struct broken_file {
        std::string file;
        std::string contents;
        std::string message_part;
    };
    const std::string byte_a = test::byte_level_spelling("a");
    const std::string byte_b = test::byte_level_spelling("b");
    const broken_file cases[] = {
        {"vocab.json", "{\"a\": 0,", "parse error"},
        {"vocab.json", "[1, 2]", "object"},
        {"vocab.json", "{\"" + byte_a + "\": \"zero\"}", "ids are not"},
        {"vocab.json", "{\"" + byte_a + "\": 0, \"" + byte_b + "\": 0}", "ids are not"},
        {"vocab.json", "{\"" + byte_a + "\": 0, \"" + byte_b + "\": 5}", "ids are not"},
        {"vocab.json", "{\"\\u4f60\": 0}", "not byte-level"},
        {"vocab.json", "{\"" + byte_a + "\": 0}", "no token for the byte"},
        {"merges.txt", byte_a + byte_b + "\n", "merges.txt:1: expected two tokens"},
        {"merges.txt", byte_a + " " + byte_b + " " + byte_a + "\n", "two tokens"},
        {"merges.txt", "#version: 0.2\n" + byte_a + " " + byte_b + "\n", "merges.txt:2: "},
        {"tokenizer_config.json", "{\"added_tokens_decoder\": ", "parse error"},
        {"tokenizer_config.json", "{}", "added_tokens_decoder"},
        {"tokenizer_config.json", "{\"tokenizer_class\": \"LlamaTokenizer\"}", "tokenizer_class"},
        {"tokenizer_config.json", R"({"added_tokens_decoder": {"x": {"content": "<x>"}}})",
         "not an id"},
        {"tokenizer_config.json", R"({"added_tokens_decoder": {"300": {"id": 1}}})",
         "no string content"},
        {"tokenizer_config.json",
         R"({"added_tokens_decoder": {"300": {"content": "<x>", "lstrip": true}}})", "lstrip"},
        {"tokenizer_config.json",
         R"({"added_tokens_decoder": {"300": {"content": "<x>", "normalized": true}}})",
         "normalized"},
        {"tokenizer_config.json", R"({"added_tokens_decoder": {"97": {"content": "<x>"}}})",
         "already gives"},
        {"tokenizer_config.json",
         R"({"added_tokens_decoder": {"300": {"content": "<x>"}, "301": {"content": "<x>"}}})",
         "occurs twice"},
        {"tokenizer_config.json", R"({"added_tokens_decoder": {"300": {"content": ""}}})",
         "empty"},
    };
    for (const broken_file& broken : cases) {
        INFO(broken.file << ": " << broken.contents);
        const test::tiny_tokenizer_dir dir({}, {}, {});
        dir.write(broken.file, broken.contents);
        auto loaded = bpe_tokenizer::load(dir.path().string());
        REQUIRE_FALSE(loaded.ok());
        INFO("message: " << loaded.err().message);
        CHECK(loaded.err().kind != error_kind::internal);
        CHECK(contains(loaded.err().message, (dir.path() / broken.file).string()));
        CHECK(contains(loaded.err().message, broken.message_part));
    }
}

TEST_CASE("bpe_tokenizer::load refuses a merge of tokens that are not in the vocabulary",
          "[tokenizer]") {
    // "ab" + "c" is listed, but "abc" is not a token.
    const test::tiny_tokenizer_dir dir({"ab"}, {{"a", "b"}, {"ab", "c"}}, {});
    auto loaded = bpe_tokenizer::load(dir.path().string());
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.err().kind == error_kind::invalid_input);
    CHECK(contains(loaded.err().message, "merges.txt:3: "));
}

}  // namespace
}  // namespace megatts

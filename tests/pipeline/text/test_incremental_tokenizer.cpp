#include "pipeline/text/incremental_tokenizer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tests/pipeline/text/tokenizer_fixtures.h"

namespace megatts {
namespace {

using ids = std::vector<std::int32_t>;

ids encode(std::string_view text) {
    auto encoded = test::qwen_tokenizer().encode(text);
    REQUIRE(encoded.ok());
    return std::move(*encoded);
}

void append(ids& all, const ids& more) { all.insert(all.end(), more.begin(), more.end()); }

bool starts_with(const ids& whole, const ids& prefix) {
    return prefix.size() <= whole.size() && std::equal(prefix.begin(), prefix.end(), whole.begin());
}

ids push_ok(incremental_tokenizer& tokenizer, std::string_view chunk) {
    auto released = tokenizer.push(chunk);
    INFO("chunk: " << chunk);
    REQUIRE(released.ok());
    return std::move(*released);
}

ids finish_ok(incremental_tokenizer& tokenizer) {
    auto rest = tokenizer.finish();
    REQUIRE(rest.ok());
    return std::move(*rest);
}

// Pushes text cut before each offset of `cuts` (sorted; repeats make empty chunks), then
// finishes; returns all ids in release order.
ids tokenize_in_chunks(std::string_view text, const std::vector<std::size_t>& cuts) {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    ids all;
    std::size_t begin = 0;
    for (const std::size_t cut : cuts) {
        append(all, push_ok(tokenizer, text.substr(begin, cut - begin)));
        begin = cut;
    }
    append(all, push_ok(tokenizer, text.substr(begin)));
    append(all, finish_ok(tokenizer));
    return all;
}

// Up to 12 cuts at random byte offsets, so chunks often end inside a UTF-8 sequence or an
// added token.
std::vector<std::size_t> random_cuts(std::mt19937& rng, std::size_t size) {
    std::uniform_int_distribution<std::size_t> offset(0, size);
    std::vector<std::size_t> cuts(std::uniform_int_distribution<std::size_t>(0, 12)(rng));
    for (std::size_t& cut : cuts) cut = offset(rng);
    std::sort(cuts.begin(), cuts.end());
    return cuts;
}

std::vector<std::size_t> every_byte(std::size_t size) {
    std::vector<std::size_t> cuts(size);
    std::iota(cuts.begin(), cuts.end(), 0);
    return cuts;
}

// Fragments chosen for what can make an early release wrong: combining marks that compose
// with what precedes them, Hangul jamo, contractions, whitespace runs, CR LF, digits, added
// tokens and their prefixes, characters with singleton or multi-part decompositions.
const std::vector<std::string> tricky_fragments = {
    "a", "s", "S", "t", "e", "l", "d", "'", " ", "  ", "\n", "\r", "\r\n", "\t", ".", ",", "!",
    "1", "23", "<", ">", "=", "|", "x86",
    "\xCC\x81",          // U+0301 combining acute
    "\xCC\xA3",          // U+0323 combining dot below (reorders before U+0301)
    "\xCC\xB8",          // U+0338 combining long solidus ("<" + it = U+226E)
    "\xE1\x84\x80",      // U+1100 Hangul L
    "\xE1\x85\xA1",      // U+1161 Hangul V
    "\xE1\x86\xA8",      // U+11A8 Hangul T
    "\xEA\xB0\x80",      // U+AC00 Hangul LV syllable
    "\xE4\xBD\xA0",      // U+4F60 CJK
    "\xEF\xBC\x8C",      // U+FF0C fullwidth comma
    "\xE3\x80\x80",      // U+3000 ideographic space
    "\xC2\xA0",          // U+00A0 no-break space
    "\xC2\x85",          // U+0085 next line
    "\xE1\xA0\x8E",      // U+180E Mongolian vowel separator
    "\xE0\xAF\x86",      // U+0BC6 Tamil vowel sign E (+ U+0BBE = U+0BCA)
    "\xE0\xAE\xBE",      // U+0BBE Tamil vowel sign AA, a starter that composes backward
    "\xE0\xA4\x95",      // U+0915 Devanagari KA
    "\xE0\xA5\x8D",      // U+094D Devanagari virama
    "\xE2\x84\xA6",      // U+2126 Ohm sign, a singleton decomposition
    "\xE0\xBD\xB3",      // U+0F73 decomposes to two non-starters
    "\xC5\xBF",          // U+017F long s, matches 's' case-insensitively
    "\xF0\x9F\x98\x80",  // U+1F600
    "\xE2\x80\x8D",      // U+200D zero width joiner
    "<|im_end|>", "<|im_", "<tts_text_bos>", "<tts_text_bos", "_single>", "<think>", "</think>",
};

TEST_CASE("incremental_tokenizer gives the golden ids however the text is cut",
          "[tokenizer]") {
    std::mt19937 rng(20240611);
    for (const auto& c : test::golden_cases()) {
        INFO("text: " << c.text);
        CHECK(tokenize_in_chunks(c.text, {}) == c.ids);
        CHECK(tokenize_in_chunks(c.text, every_byte(c.text.size())) == c.ids);
        for (int trial = 0; trial < 40; ++trial) {
            const std::vector<std::size_t> cuts = random_cuts(rng, c.text.size());
            INFO("cuts: " << Catch::Detail::stringify(cuts));
            CHECK(tokenize_in_chunks(c.text, cuts) == c.ids);
        }
    }
}

TEST_CASE("incremental_tokenizer equals encode on joined golden texts", "[tokenizer]") {
    std::mt19937 rng(7);
    const auto& cases = test::golden_cases();
    std::uniform_int_distribution<std::size_t> pick(0, cases.size() - 1);
    for (int trial = 0; trial < 300; ++trial) {
        const std::string text = cases[pick(rng)].text + cases[pick(rng)].text;
        const std::vector<std::size_t> cuts = random_cuts(rng, text.size());
        INFO("text: " << text << "\ncuts: " << Catch::Detail::stringify(cuts));
        CHECK(tokenize_in_chunks(text, cuts) == encode(text));
    }
}

TEST_CASE("incremental_tokenizer equals encode on random tricky text", "[tokenizer]") {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<std::size_t> pick(0, tricky_fragments.size() - 1);
    std::uniform_int_distribution<int> length(0, 24);
    for (int trial = 0; trial < 1500; ++trial) {
        std::string text;
        for (int n = length(rng); n > 0; --n) text += tricky_fragments[pick(rng)];
        const ids expected = encode(text);
        INFO("text: " << text);
        CHECK(tokenize_in_chunks(text, every_byte(text.size())) == expected);
        for (int cutting = 0; cutting < 8; ++cutting) {
            const std::vector<std::size_t> cuts = random_cuts(rng, text.size());
            INFO("cuts: " << Catch::Detail::stringify(cuts));
            CHECK(tokenize_in_chunks(text, cuts) == expected);
        }
    }
}

TEST_CASE("incremental_tokenizer releases a word by the time the next word starts",
          "[tokenizer]") {
    const std::vector<std::string> words = {"Hello", " world,", " this", " is", " a", " test."};
    std::string text;
    for (const std::string& word : words) text += word;
    const ids all_ids = encode(text);

    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    ids released;
    std::string sent;
    for (const std::string& word : words) {
        append(released, push_ok(tokenizer, word));
        INFO("after pushing: " << sent + word);
        CHECK(starts_with(released, encode(sent)));  // all previous words, punctuation included
        CHECK(starts_with(all_ids, released));
        sent += word;
    }
    append(released, finish_ok(tokenizer));
    CHECK(released == all_ids);
}

TEST_CASE("incremental_tokenizer releases a word by the next word's first letter, pushed "
          "character by character",
          "[tokenizer]") {
    const std::string text = "Hello world, this is a test.";
    const ids all_ids = encode(text);
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    ids released;
    for (std::size_t i = 0; i < text.size(); ++i) {
        append(released, push_ok(tokenizer, text.substr(i, 1)));
        INFO("after pushing: " << text.substr(0, i + 1));
        CHECK(starts_with(all_ids, released));
        if (i > 0 && text[i - 1] == ' ') {
            // A word starts: everything before the space that it begins with is out.
            CHECK(starts_with(released, encode(text.substr(0, i - 1))));
        }
    }
    append(released, finish_ok(tokenizer));
    CHECK(released == all_ids);
}

TEST_CASE("incremental_tokenizer releases a word as soon as the space or punctuation after it "
          "arrives",
          "[tokenizer]") {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    CHECK(push_ok(tokenizer, "Hello").empty());
    CHECK(push_ok(tokenizer, " ") == encode("Hello"));
    CHECK(push_ok(tokenizer, "world").empty());
    CHECK(push_ok(tokenizer, ",") == encode(" world"));
    CHECK(finish_ok(tokenizer) == encode(","));
}

TEST_CASE("incremental_tokenizer releases CJK text at punctuation without waiting for more",
          "[tokenizer]") {
    const std::string hello = "\xE4\xBD\xA0\xE5\xA5\xBD";      // 你好
    const std::string comma = "\xEF\xBC\x8C";                  // ，
    const std::string this_is = "\xE8\xBF\x99\xE6\x98\xAF";    // 这是
    const std::string full_stop = "\xE3\x80\x82";              // 。
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    CHECK(push_ok(tokenizer, hello).empty());  // a run of letters may go on
    CHECK(push_ok(tokenizer, comma) == encode(hello));
    CHECK(push_ok(tokenizer, this_is).empty());  // one regex piece with the comma before it
    CHECK(push_ok(tokenizer, full_stop) == encode(comma + this_is));
    CHECK(finish_ok(tokenizer) == encode(full_stop));
}

TEST_CASE("incremental_tokenizer waits for an added token cut between chunks", "[tokenizer]") {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    CHECK(push_ok(tokenizer, "Hi<|im_").empty());
    CHECK(push_ok(tokenizer, "end|>") == ids{13048, 151645});
    CHECK(push_ok(tokenizer, "<tts_text_bos").empty());  // may become <tts_text_bos_single>
    CHECK(push_ok(tokenizer, "_single>") == ids{151674});
    CHECK(push_ok(tokenizer, "<tts_text_bos>") == ids{151672});  // no longer token is possible
    CHECK(push_ok(tokenizer, "<|im_").empty());
    ids rest = push_ok(tokenizer, "x");  // not a token after all
    append(rest, finish_ok(tokenizer));
    CHECK(rest == encode("<|im_x"));
}

TEST_CASE("incremental_tokenizer holds a character back while a combining mark may follow",
          "[tokenizer]") {
    SECTION("acute accent") {
        incremental_tokenizer tokenizer(test::qwen_tokenizer());
        CHECK(push_ok(tokenizer, "1e") == encode("1"));  // a digit is final at once
        CHECK(push_ok(tokenizer, "\xCC\x81").empty());
        CHECK(finish_ok(tokenizer) == encode("\xC3\xA9"));  // é
    }
    SECTION("contraction") {
        // "'s" is a final regex piece, but the s may still become ŝ, which splits differently.
        const std::string s_circumflex = "'\xC5\x9D";
        REQUIRE_FALSE(starts_with(encode(s_circumflex), encode("'s")));
        incremental_tokenizer tokenizer(test::qwen_tokenizer());
        CHECK(push_ok(tokenizer, "'s").empty());
        ids all = push_ok(tokenizer, "\xCC\x82");
        append(all, finish_ok(tokenizer));
        CHECK(all == encode(s_circumflex));
    }
    SECTION("Hangul jamo") {
        incremental_tokenizer tokenizer(test::qwen_tokenizer());
        ids all = push_ok(tokenizer, "\xE1\x84\x80");     // U+1100
        append(all, push_ok(tokenizer, "\xE1\x85\xA1"));  // U+1161
        append(all, push_ok(tokenizer, "\xE1\x86\xA8"));  // U+11A8
        append(all, finish_ok(tokenizer));
        CHECK(all == encode("\xEA\xB0\x81"));  // 각
    }
}

TEST_CASE("incremental_tokenizer waits for the rest of a UTF-8 sequence", "[tokenizer]") {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    ids all = push_ok(tokenizer, "Hi \xE4");
    CHECK(all == encode("Hi"));
    CHECK(push_ok(tokenizer, "\xBD").empty());
    append(all, push_ok(tokenizer, "\xA0!"));
    append(all, finish_ok(tokenizer));
    CHECK(all == encode("Hi \xE4\xBD\xA0!"));
}

TEST_CASE("incremental_tokenizer rejects a chunk that breaks UTF-8 and keeps its state",
          "[tokenizer]") {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    ids all = push_ok(tokenizer, "ab \xE4");
    for (const std::string bad : {"\xFF", "x", "\xBD\xFF"}) {
        auto rejected = tokenizer.push(bad);
        REQUIRE_FALSE(rejected.ok());
        CHECK(rejected.err().kind == error_kind::invalid_input);
    }
    append(all, push_ok(tokenizer, "\xBD\xA0 cd"));
    append(all, finish_ok(tokenizer));
    CHECK(all == encode("ab \xE4\xBD\xA0 cd"));
}

TEST_CASE("incremental_tokenizer::finish rejects text that ends inside a character and resets",
          "[tokenizer]") {
    incremental_tokenizer tokenizer(test::qwen_tokenizer());
    CHECK(push_ok(tokenizer, "a \xE4\xBD") == encode("a"));
    auto truncated = tokenizer.finish();
    REQUIRE_FALSE(truncated.ok());
    CHECK(truncated.err().kind == error_kind::invalid_input);

    ids next = push_ok(tokenizer, "Hello");
    append(next, finish_ok(tokenizer));
    CHECK(next == encode("Hello"));
}

}  // namespace
}  // namespace megatts

#include "pipeline/text/pre_tokenizer.h"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace megatts {
namespace {

using pieces = std::vector<std::string>;

pieces split(std::string_view text, bool more_may_follow) {
    static const pre_tokenizer splitter = [] {
        auto created = pre_tokenizer::create();
        REQUIRE(created.ok());
        return std::move(*created);
    }();
    auto split = splitter.split(text, more_may_follow);
    REQUIRE(split.ok());
    return pieces(split->begin(), split->end());
}

TEST_CASE("pre_tokenizer splits like Qwen2's regex", "[tokenizer]") {
    CHECK(split("Hello world", false) == pieces{"Hello", " world"});
    CHECK(split("a  b", false) == pieces{"a", " ", " b"});
    CHECK(split("a  ", false) == pieces{"a", "  "});
    CHECK(split("don't I'LL", false) == pieces{"don", "'t", " I", "'LL"});
    CHECK(split("x\r\n\r\ny", false) == pieces{"x", "\r\n\r\n", "y"});
    CHECK(split("x  \n y", false) == pieces{"x", "  \n", " y"});
    CHECK(split("2024!?", false) == pieces{"2", "0", "2", "4", "!?"});
    CHECK(split("a...\n\nb", false) == pieces{"a", "...\n\n", "b"});
    CHECK(split("$1", false) == pieces{"$", "1"});
    CHECK(split("", false).empty());
}

TEST_CASE("pre_tokenizer classes whitespace as Unicode White_Space", "[tokenizer]") {
    // U+3000 ideographic space and U+0085 next line are whitespace ...
    CHECK(split("a\xE3\x80\x80\xE3\x80\x80" "b", false) ==
          pieces{"a", "\xE3\x80\x80", "\xE3\x80\x80" "b"});
    CHECK(split("a\xC2\x85" "b", false) == pieces{"a", "\xC2\x85" "b"});
    // ... and U+180E (Mongolian vowel separator, a format character) is not.
    CHECK(split("\xE1\xA0\x8E.a", false) == pieces{"\xE1\xA0\x8E.", "a"});
    CHECK(split(" \xE1\xA0\x8E" "a", false) == pieces{" \xE1\xA0\x8E", "a"});
    CHECK(split("  \xE1\xA0\x8E", false) == pieces{" ", " \xE1\xA0\x8E"});
}

TEST_CASE("pre_tokenizer holds back the pieces that more text could change", "[tokenizer]") {
    CHECK(split("Hello", true).empty());               // the letters may go on
    CHECK(split("Hello ", true) == pieces{"Hello"});   // the space may join the next word
    CHECK(split("Hello w", true) == pieces{"Hello"});
    CHECK(split("a  b", true) == pieces{"a", " "});
    CHECK(split("'", true).empty());                   // may become 's
    CHECK(split("x'", true) == pieces{"x"});
    CHECK(split("'s", true) == pieces{"'s"});          // a contraction never grows
    CHECK(split("12", true) == pieces{"1", "2"});      // digits are single
    CHECK(split("\r", true).empty());                  // may become \r\n
    CHECK(split(",", true).empty());                   // punctuation runs
    CHECK(split(", ", true) == pieces{","});
    CHECK(split("ok.\n", true) == pieces{"ok"});       // may take more newlines
}

}  // namespace
}  // namespace megatts

#include "pipeline/text/utf8.h"

#include <catch2/catch.hpp>

#include <string>

namespace megatts {
namespace {

TEST_CASE("utf8_valid_prefix_length stops at the first ill-formed sequence", "[utf8]") {
    CHECK(utf8_valid_prefix_length("") == 0);
    CHECK(utf8_valid_prefix_length("abc") == 3);
    CHECK(utf8_valid_prefix_length(std::string("a\0b", 3)) == 3);
    CHECK(utf8_valid_prefix_length("\xE4\xBD\xA0\xF0\x9F\x98\x80") == 7);
    CHECK(utf8_valid_prefix_length("\xF4\x8F\xBF\xBF") == 4);  // U+10FFFF
    CHECK(utf8_valid_prefix_length("a\xC3") == 1);              // cut short
    CHECK(utf8_valid_prefix_length("a\xFF b") == 1);
    CHECK(utf8_valid_prefix_length("\x80") == 0);               // stray continuation
    CHECK(utf8_valid_prefix_length("\xC0\xAF") == 0);           // overlong
    CHECK(utf8_valid_prefix_length("\xE0\x80\xAF") == 0);       // overlong
    CHECK(utf8_valid_prefix_length("\xED\xA0\x80") == 0);       // surrogate
    CHECK(utf8_valid_prefix_length("\xF4\x90\x80\x80") == 0);   // above U+10FFFF
    CHECK(utf8_valid_prefix_length("\xE4\xBD" "a") == 0);       // continuation missing
}

TEST_CASE("utf8_truncated_sequence recognizes a character cut short", "[utf8]") {
    CHECK(utf8_truncated_sequence("\xE4"));
    CHECK(utf8_truncated_sequence("\xE4\xBD"));
    CHECK(utf8_truncated_sequence("\xF0\x9F\x98"));
    CHECK_FALSE(utf8_truncated_sequence(""));
    CHECK_FALSE(utf8_truncated_sequence("a"));
    CHECK_FALSE(utf8_truncated_sequence("\xE4\xBD\xA0"));  // complete
    CHECK_FALSE(utf8_truncated_sequence("\xFF"));
    CHECK_FALSE(utf8_truncated_sequence("\xE0\x80"));      // can only become an overlong
    CHECK_FALSE(utf8_truncated_sequence("\xED\xA0"));      // can only become a surrogate
    CHECK_FALSE(utf8_truncated_sequence("\xE4\xBD" "a"));
}

TEST_CASE("utf8_replace_invalid matches Python's errors=\"replace\"", "[utf8]") {
    // Expected values are CPython's bytes.decode("utf-8", errors="replace").
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(utf8_replace_invalid("abc \xE4\xBD\xA0") == "abc \xE4\xBD\xA0");
    CHECK(utf8_replace_invalid("\xE0\x80") == fffd + fffd);
    CHECK(utf8_replace_invalid("\xF0\x90\x80") == fffd);
    CHECK(utf8_replace_invalid("\xED\xA0\x80") == fffd + fffd + fffd);
    CHECK(utf8_replace_invalid("a\xC3") == "a" + fffd);
    CHECK(utf8_replace_invalid("\xC0\xAF") == fffd + fffd);
    CHECK(utf8_replace_invalid("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);
    CHECK(utf8_replace_invalid("\xE4\xBD\xA0\xFF\xE5") == "\xE4\xBD\xA0" + fffd + fffd);
}

}  // namespace
}  // namespace megatts

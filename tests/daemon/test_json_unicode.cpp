#include "daemon/protocol/json_unicode.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

TEST_CASE("well-formed JSON text has no Unicode problem, whatever else is wrong with it", "[protocol]") {
    CHECK_FALSE(json_unicode_problem(R"({"text": "say \"\u00e9\" twice", "n": 1})"));
    CHECK_FALSE(json_unicode_problem(R"({"text": "caf\u00E9 — ok"})"));
    CHECK_FALSE(json_unicode_problem(R"({"text": "\ud83d\ude00"})"));
    CHECK_FALSE(json_unicode_problem(R"({"text": "\\ud800"})"));  // an escaped backslash, then text
    CHECK_FALSE(json_unicode_problem(R"({"broken": )"));
}

TEST_CASE("lone surrogate escapes are found", "[protocol]") {
    CHECK(json_unicode_problem(R"({"text": "\ud800"})"));
    CHECK(json_unicode_problem(R"({"text": "\uDC00 x"})"));
    CHECK(json_unicode_problem(R"({"text": "\ud800\u0041"})"));
    CHECK(json_unicode_problem(R"({"text": "\ud83d\ude00\ud83d"})"));
}

TEST_CASE("ill-formed UTF-8 bytes are found", "[protocol]") {
    CHECK(json_unicode_problem("{\"text\": \"\xC3\x28\"}"));
    CHECK(json_unicode_problem("{\"text\": \"\xED\xA0\x80\"}"));  // a surrogate encoded in UTF-8
    CHECK(json_unicode_problem("{\"text\": \"\xE2\x82\"}"));      // truncated
}

}  // namespace
}  // namespace megatts

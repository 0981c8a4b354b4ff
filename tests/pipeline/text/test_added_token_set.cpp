#include "pipeline/text/added_token_set.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace megatts {
namespace {

added_token_set make_set(std::vector<std::pair<std::string, std::int32_t>> tokens) {
    auto set = added_token_set::create(std::move(tokens));
    REQUIRE(set.ok());
    return std::move(*set);
}

TEST_CASE("added_token_set finds the leftmost match, and there the longest", "[tokenizer]") {
    const added_token_set set = make_set({{"<a", 1}, {"<ab", 2}, {"b", 3}});
    auto longest = set.find("x<ab", 0);
    REQUIRE(longest.has_value());
    CHECK(longest->begin == 1);
    CHECK(longest->length == 3);
    CHECK(longest->id == 2);

    auto leftmost = set.find("xb<ab", 0);
    REQUIRE(leftmost.has_value());
    CHECK(leftmost->begin == 1);
    CHECK(leftmost->id == 3);

    auto from = set.find("xb<ab", 2);
    REQUIRE(from.has_value());
    CHECK(from->begin == 2);
    CHECK(from->id == 2);

    CHECK_FALSE(set.find("<<<", 0).has_value());
    CHECK_FALSE(set.find("xyz", 0).has_value());
}

TEST_CASE("added_token_set::open_prefix_start finds where more text could complete a token",
          "[tokenizer]") {
    const added_token_set set =
        make_set({{"<|im_end|>", 1}, {"<tts_text_bos>", 2}, {"<tts_text_bos_single>", 3}});
    CHECK(set.open_prefix_start("abc<|im_", 0) == 3);
    CHECK(set.open_prefix_start("abc<", 0) == 3);
    CHECK(set.open_prefix_start("abc<|im_end|>", 0) == 13);
    CHECK(set.open_prefix_start("<tts_text_bos", 0) == 0);
    CHECK(set.open_prefix_start("<tts_text_bos>", 0) == 14);  // nothing longer starts so
    CHECK(set.open_prefix_start("<tts_text_bos_", 0) == 0);
    CHECK(set.open_prefix_start("<|im_x", 0) == 6);
    CHECK(set.open_prefix_start("<<|im", 1) == 1);
    CHECK(set.open_prefix_start("", 0) == 0);
}

TEST_CASE("added_token_set looks tokens up by content and by id", "[tokenizer]") {
    const added_token_set set = make_set({{"<x>", 10}, {"<yy>", 11}});
    CHECK(set.id("<x>") == 10);
    CHECK(set.id("<yy>") == 11);
    CHECK_FALSE(set.id("<x").has_value());
    CHECK(set.content(11) == "<yy>");
    CHECK_FALSE(set.content(12).has_value());
}

TEST_CASE("added_token_set::create rejects empty and repeated tokens", "[tokenizer]") {
    CHECK_FALSE(added_token_set::create({{"", 1}}).ok());
    CHECK_FALSE(added_token_set::create({{"<x>", 1}, {"<x>", 2}}).ok());
    CHECK_FALSE(added_token_set::create({{"<x>", 1}, {"<y>", 1}}).ok());
    CHECK(added_token_set::create({}).ok());
}

}  // namespace
}  // namespace megatts

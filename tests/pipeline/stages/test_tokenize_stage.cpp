#include "pipeline/stages/tokenize_stage.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "pipeline/stages/chat_template.h"
#include "tests/pipeline/engine/tiny_model.h"
#include "tests/pipeline/stages/stage_runner.h"

namespace megatts {
namespace {

// Feeds `chunks` then end_of_text; returns all ids and checks the frame shapes on the way.
std::vector<std::int32_t> tokenize(const std::vector<std::string>& chunks) {
    tokenize_stage stage(test::tiny_model().tokenizer);
    std::vector<std::int32_t> ids;
    for (const auto& c : chunks) {
        for (auto& f : test::run(stage, frame{{}, text_chunk{c}})) {
            auto& t = std::get<text_tokens>(f.payload);
            CHECK_FALSE(t.last);
            CHECK_FALSE(t.ids.empty());
            ids.insert(ids.end(), t.ids.begin(), t.ids.end());
        }
    }
    auto end = test::run(stage, frame{{}, end_of_text{}});
    REQUIRE(end.size() == 2);
    auto& last = std::get<text_tokens>(end[0].payload);
    CHECK(last.last);
    CHECK(std::holds_alternative<end_of_text>(end[1].payload));
    ids.insert(ids.end(), last.ids.begin(), last.ids.end());
    return ids;
}

TEST_CASE("the tokenize stage gives the template's ids however the text is cut", "[stages]") {
    const std::string text = "Hello world, it's 12:30 - caf\xc3\xa9 time!";
    auto whole = test::tiny_model().tokenizer.encode(std::string(k_template_head) + text + std::string(k_template_tail));
    REQUIRE(whole.ok());
    CHECK(tokenize({text}) == *whole);
    CHECK(tokenize({"Hello", " world,", " it's 12", ":30 - caf\xc3", "\xa9 time!"}) == *whole);
    std::vector<std::string> bytes;
    for (char c : text) bytes.emplace_back(1, c);
    CHECK(tokenize(bytes) == *whole);
}

TEST_CASE("the tokenize stage releases a word once the text after it decides it", "[stages]") {
    tokenize_stage stage(test::tiny_model().tokenizer);
    auto first = test::run(stage, frame{{}, text_chunk{"Hello"}});
    std::size_t released = 0;
    for (auto& f : first) released += std::get<text_tokens>(f.payload).ids.size();
    auto second = test::run(stage, frame{{}, text_chunk{" world"}});
    REQUIRE(second.size() == 1);
    // "Hello" is final once " world" arrived: the template head and "Hello" are out by now.
    CHECK(released + std::get<text_tokens>(second[0].payload).ids.size() >= k_template_role_ids + 1);
}

TEST_CASE("text that is not UTF-8 becomes an error frame; other frames pass", "[stages]") {
    tokenize_stage stage(test::tiny_model().tokenizer);
    auto bad = test::run(stage, frame{{}, text_chunk{"ok \xff"}});
    REQUIRE(bad.size() == 1);
    CHECK(std::get<error_report>(bad[0].payload).error.code == session_errc::invalid_utf8);
    auto passed = test::run(stage, frame{{}, mark_report{ttfa_mark::admitted}});
    REQUIRE(passed.size() == 1);
    CHECK(std::holds_alternative<mark_report>(passed[0].payload));
}

}  // namespace
}  // namespace megatts

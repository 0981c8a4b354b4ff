#include "tests/pipeline/text/tokenizer_fixtures.h"

#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

namespace megatts::test {
namespace {

const nlohmann::json& cases_file() {
    static const nlohmann::json file = [] {
        std::ifstream in(MEGATTS_FIXTURE_DIR "/tokenizer_cases.json");
        REQUIRE(in);
        return nlohmann::json::parse(in);
    }();
    return file;
}

std::vector<tokenizer_case> read_cases(const char* key) {
    std::vector<tokenizer_case> cases;
    for (const auto& entry : cases_file().at(key)) {
        cases.push_back({entry.at("text").get<std::string>(),
                         entry.at("ids").get<std::vector<std::int32_t>>()});
    }
    return cases;
}

}  // namespace

const bpe_tokenizer& qwen_tokenizer() {
    static const bpe_tokenizer tokenizer = [] {
        auto loaded = bpe_tokenizer::load(MEGATTS_DATA_DIR "/tokenizer");
        INFO((loaded ? "" : loaded.err().message));
        REQUIRE(loaded.ok());
        return std::move(*loaded);
    }();
    return tokenizer;
}

const std::vector<tokenizer_case>& golden_cases() {
    static const std::vector<tokenizer_case> cases = read_cases("cases");
    return cases;
}

const std::vector<tokenizer_case>& template_examples() {
    static const std::vector<tokenizer_case> cases = read_cases("template_examples");
    return cases;
}

const std::vector<std::string>& third_party_texts() {
    static const std::vector<std::string> texts = [] {
        std::vector<std::string> out;
        for (const auto& entry : cases_file().at("third_party_check")) {
            out.push_back(entry.at("text").get<std::string>());
        }
        return out;
    }();
    return texts;
}

}  // namespace megatts::test

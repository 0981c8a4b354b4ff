#include "daemon/http/speech_request.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

speech_request parsed(const std::string& body) {
    auto r = parse_speech_request(body, 100);
    if (auto* e = std::get_if<speech_request_error>(&r)) FAIL(e->error.message);
    return std::get<speech_request>(r);
}

speech_request_error refused(const std::string& body) {
    auto r = parse_speech_request(body, 100);
    REQUIRE(std::holds_alternative<speech_request_error>(r));
    return std::get<speech_request_error>(r);
}

TEST_CASE("an OpenAI request with megatts's extensions", "[speech]") {
    const auto r = parsed(R"({"model":"tts-1","input":"Hi there","voice":"Ryan","response_format":"wav",
        "stream":true,"speed":1.0,"language":"English","sample_rate":16000,"seed":7,"top_k":10})");
    CHECK(r.input == "Hi there");
    CHECK(r.voice == "ryan");
    CHECK(r.language == "english");
    CHECK(r.format == speech_format::wav);
    CHECK(r.stream);
    CHECK(r.sample_rate == 16000);
    CHECK(r.sampling.seed == 7u);
    CHECK(r.sampling.top_k == 10);
}

TEST_CASE("defaults: Ogg Opus, whole, auto language, the server's voice", "[speech]") {
    const auto r = parsed(R"({"input":"Hi"})");
    CHECK(r.format == speech_format::opus);
    CHECK_FALSE(r.stream);
    CHECK(r.language == "auto");
    CHECK_FALSE(r.voice);
    CHECK(r.sample_rate == 24000);
    CHECK(parsed(R"({"input":"Hi","voice":{"id":"Vivian"}})").voice == "vivian");
}

TEST_CASE("bad requests name their member", "[speech]") {
    const auto check = [](const std::string& body, error_code code, const std::string& param) {
        const auto e = refused(body);
        CHECK(error_code_name(e.error.code) == error_code_name(code));
        CHECK(e.param == param);
    };
    check(R"({"voice":"ryan"})", error_code::bad_request, "input");
    check(R"({"input":""})", error_code::bad_request, "input");
    check(R"({"input":")" + std::string(101, 'a') + R"("})", error_code::bad_request, "input");
    check(R"({"input":"hi","response_format":"mp3"})", error_code::unsupported_format, "response_format");
    check(R"({"input":"hi","response_format":"ogg"})", error_code::bad_request, "response_format");
    check(R"({"input":"hi","speed":1.5})", error_code::bad_request, "speed");
    check(R"({"input":"hi","stream":"yes"})", error_code::bad_request, "stream");
    check(R"({"input":"hi","sample_rate":96000})", error_code::bad_request, "sample_rate");
    check(R"({"input":"hi","voice":{"name":"x"}})", error_code::bad_request, "voice.id");
    check(R"({"input":"hi")", error_code::bad_json, "");
    check(R"(["hi"])", error_code::bad_json, "");
    check(R"({"input":"\udc00"})", error_code::invalid_utf8, "");
}

}  // namespace
}  // namespace megatts

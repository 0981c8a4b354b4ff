#include "daemon/protocol/client_message.h"

#include <catch2/catch.hpp>

#include <string>

namespace megatts {
namespace {

client_message parsed(const std::string& text) {
    auto r = parse_client_message(text);
    if (auto* e = std::get_if<protocol_error>(&r)) FAIL("unexpected error: " << e->message);
    return std::get<client_message>(r);
}

protocol_error refused(const std::string& text) {
    auto r = parse_client_message(text);
    REQUIRE(std::holds_alternative<protocol_error>(r));
    return std::get<protocol_error>(r);
}

TEST_CASE("a full start message is read member by member", "[protocol]") {
    auto m = parsed(R"({"type":"start","protocol":"megatts.v1","voice":"ryan","language":"english",
        "format":"pcm16","sample_rate":16000,"opus_frame_ms":10,"max_frames":25,
        "sampling":{"seed":42,"greedy":true,"temperature":0.5,"top_k":10,"top_p":0.9},
        "text":"Hello there.","end":true,"trace":true,"future_member":{"ignored":1}})");
    const auto& s = std::get<start_message>(m);
    CHECK(s.protocol == "megatts.v1");
    CHECK(s.voice == "ryan");
    CHECK(s.language == "english");
    CHECK(s.format == audio_format::pcm16);
    CHECK(s.sample_rate == 16000);
    CHECK(s.opus_frame_ms == 10);
    CHECK(s.max_frames == 25);
    CHECK(s.sampling.seed == 42u);
    CHECK(s.sampling.greedy);
    CHECK(s.sampling.temperature == 0.5f);
    CHECK(s.sampling.top_k == 10);
    CHECK(s.sampling.top_p == 0.9f);
    CHECK(s.text == "Hello there.");
    CHECK_FALSE(s.flush);
    CHECK(s.end);
    CHECK(s.trace);
}

TEST_CASE("a minimal start leaves every default to the session", "[protocol]") {
    const auto s = std::get<start_message>(parsed(R"({"type":"start"})"));
    CHECK(s == start_message{});
}

TEST_CASE("the other messages are read", "[protocol]") {
    CHECK(std::get<text_message>(parsed(R"({"type":"text","text":"Hel\u006co "})")) == text_message{"Hello "});
    CHECK(std::get<text_message>(parsed(R"({"type":"text","text":"a","flush":true})")) ==
          text_message{.text = "a", .flush = true});
    CHECK(std::get<text_message>(parsed(R"({"type":"text","text":"","end":true})")) ==
          text_message{.text = "", .end = true});
    CHECK(std::holds_alternative<flush_message>(parsed(R"({"type":"flush"})")));
    CHECK(std::holds_alternative<end_message>(parsed(R"({"type":"end"})")));
    CHECK(std::holds_alternative<cancel_message>(parsed(R"({"type":"cancel"})")));
    const auto metrics = std::get<client_metrics_message>(
        parsed(R"({"type":"client_metrics","context":3,"first_played_ms":212.5,"underruns":2,"buffer_ms":60,
                   "played_samples":96000,"decode_errors":0})"));
    CHECK(metrics.first_played_ms == 212.5);
    CHECK(metrics.underruns == 2);
    CHECK(metrics.played_samples == 96000);
}

TEST_CASE("what is not a JSON object is bad_json", "[protocol]") {
    CHECK(refused("{").code == error_code::bad_json);
    CHECK(refused("").code == error_code::bad_json);
    CHECK(refused("[1,2]").code == error_code::bad_json);
    CHECK(refused("\"start\"").code == error_code::bad_json);
}

TEST_CASE("ill-formed Unicode is invalid_utf8, not bad_json", "[protocol]") {
    CHECK(refused(R"({"type":"text","text":"\ud800"})").code == error_code::invalid_utf8);
    CHECK(refused("{\"type\":\"text\",\"text\":\"\xFF\"}").code == error_code::invalid_utf8);
}

TEST_CASE("a missing or unknown type is refused", "[protocol]") {
    CHECK(refused(R"({"text":"hi"})").code == error_code::bad_message);
    CHECK(refused(R"({"type":7})").code == error_code::bad_message);
    const auto e = refused(R"({"type":"speak"})");
    CHECK(e.code == error_code::unknown_type);
    CHECK_THAT(e.message, Catch::Contains("'speak'"));
    const auto long_type = refused(R"({"type":")" + std::string(1000, 'x') + "\"}");
    CHECK(long_type.message.size() < 100);
}

TEST_CASE("bad members are bad_message naming the member", "[protocol]") {
    const auto check = [](const std::string& text, const std::string& needle) {
        const auto e = refused(text);
        CHECK(e.code == error_code::bad_message);
        CHECK_THAT(e.message, Catch::Contains(needle));
    };
    check(R"({"type":"text"})", "text.text: is required");
    check(R"({"type":"text","text":5})", "text.text: must be a string");
    check(R"({"type":"start","voice":["ryan"]})", "start.voice: must be a string");
    check(R"({"type":"start","format":"mp3"})", "start.format");
    check(R"({"type":"text","text":"a","flush":true,"end":true})", "text.end: flush and end cannot both be true");
    check(R"({"type":"start","flush":true,"end":true})", "start.end");
    check(R"({"type":"client_metrics","context":0})", "client_metrics.context");
    check(R"({"type":"client_metrics","context":4294967296})", "client_metrics.context");
    check(R"({"type":"client_metrics","context":1.5})", "client_metrics.context");
    check(R"({"type":"start","sample_rate":96000})", "start.sample_rate");
    check(R"({"type":"start","sample_rate":16000})", "start.sample_rate: must be 48000 for opus");
    check(R"({"type":"start","opus_frame_ms":15})", "start.opus_frame_ms");
    check(R"({"type":"start","max_frames":-1})", "start.max_frames");
    check(R"({"type":"start","max_frames":2.5})", "start.max_frames");
    check(R"({"type":"start","sampling":7})", "start.sampling: must be an object");
    check(R"({"type":"start","sampling":{"temperature":0}})", "start.sampling.temperature");
    check(R"({"type":"start","sampling":{"top_p":1.5}})", "start.sampling.top_p");
    check(R"({"type":"start","sampling":{"top_k":-1}})", "start.sampling.top_k");
    check(R"({"type":"start","sampling":{"seed":9007199254740992}})", "start.sampling.seed");
    check(R"({"type":"start","sampling":{"greedy":"yes"}})", "start.sampling.greedy: must be true or false");
    check(R"({"type":"start","end":1})", "start.end");
    check(R"({"type":"client_metrics","underruns":-1})", "client_metrics.underruns");
}

TEST_CASE("every message survives encode then parse", "[protocol]") {
    start_message full;
    full.protocol = "megatts.v1";
    full.voice = "vivian";
    full.language = "chinese";
    full.format = audio_format::pcm16;
    full.sample_rate = 22050;
    full.opus_frame_ms = 10;
    full.max_frames = 40;
    full.sampling = {.seed = 9007199254740991u, .greedy = true, .temperature = 0.75f, .top_k = 5, .top_p = 0.5f};
    full.text = "ni hao \xE4\xBD\xA0\xE5\xA5\xBD";
    full.end = true;
    full.trace = true;
    client_metrics_message metrics{.context = 4294967295u, .first_played_ms = 1.25, .underruns = 1, .buffer_ms = 40,
                                   .played_samples = 480, .decode_errors = 0};
    for (const client_message& m : std::initializer_list<client_message>{
             full, start_message{.flush = true}, start_message{}, text_message{"a \"quoted\" \\ line\n"},
             text_message{.text = "x", .flush = true}, text_message{.text = "y", .end = true}, flush_message{},
             end_message{}, cancel_message{}, metrics, client_metrics_message{}}) {
        const auto text = encode_client_message(m);
        INFO(text);
        CHECK(parsed(text) == m);
    }
}

}  // namespace
}  // namespace megatts

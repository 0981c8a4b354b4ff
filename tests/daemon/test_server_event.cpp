#include "daemon/protocol/server_event.h"

#include <catch2/catch.hpp>

#include <string>

namespace megatts {
namespace {

server_event parsed(const std::string& text) {
    auto r = parse_server_event(text);
    if (auto* e = std::get_if<protocol_error>(&r)) FAIL("unexpected error: " << e->message);
    return std::get<server_event>(r);
}

TEST_CASE("events encode with type first and the members of PROTOCOL.md §4", "[protocol]") {
    CHECK(encode_server_event(stall_event{.stalled = true, .queued_ms = 640}) ==
          R"({"type":"stall","stalled":true,"queued_ms":640})");
    CHECK(encode_server_event(error_event{.code = error_code::unknown_voice, .message = "unknown voice 'nobody'",
                                          .context = 7, .fatal = false}) ==
          R"({"type":"error","code":"unknown_voice","message":"unknown voice 'nobody'","fatal":false,"context":7})");
    CHECK(encode_server_event(started_event{.context = 7, .format = audio_format::opus, .sample_rate = 48000,
                                            .opus_frame_ms = 20, .pre_skip = 312}) ==
          R"({"type":"started","context":7,"format":"opus","sample_rate":48000,"channels":1,"opus_frame_ms":20,)"
          R"("pre_skip":312})");
    CHECK(encode_server_event(done_event{.context = 7, .reason = done_reason::end, .layout = utterance_layout::whole,
                                         .frames = 31, .audio_ms = 2480, .messages = 125, .rtf = 0.25}) ==
          R"({"type":"done","context":7,"reason":"end","layout":"whole","frames":31,"audio_ms":2480.0,)"
          R"("messages":125,"rtf":0.25})");
}

TEST_CASE("metrics keep the marks in their fixed order", "[protocol]") {
    const metrics_event e{.context = 1,
                          .marks = {{"received", 0}, {"tokenized", 0.25}, {"first_sent", 182.5}},
                          .server_ttfa_ms = 182.5};
    CHECK(encode_server_event(e) ==
          R"({"type":"metrics","context":1,"marks":{"received":0.0,"tokenized":0.25,"first_sent":182.5},)"
          R"("server_ttfa_ms":182.5})");
}

TEST_CASE("every event survives encode then parse", "[protocol]") {
    const ready_event ready{
        .protocol = "megatts.v1",
        .server = "megatts 0.1.0",
        .model = "tiny-cv06",
        .synthetic = true,
        .voices = {"ryan", "vivian"},
        .languages = {"auto", "english"},
        .defaults = {.voice = "ryan", .language = "auto", .format = audio_format::opus, .opus_frame_ms = 20,
                     .temperature = 0.5f, .top_k = 50, .top_p = 1.0f},
        .limits = {4096, 65536, 4, 500, 2000, 10000, 300, 30, 100},
    };
    const done_event done{.context = 3, .reason = done_reason::end, .layout = utterance_layout::streaming, .frames = 12, .audio_ms = 960.5,
                          .messages = 48, .rtf = 0.25, .trace_json = R"({"traceEvents":[]})"};
    for (const server_event& e : std::initializer_list<server_event>{
             ready, started_event{.context = 2, .format = audio_format::pcm16, .sample_rate = 16000},
             metrics_event{.context = 2, .marks = {{"received", 0}, {"admitted", 1.5}}},
             done, done_event{.context = 1, .reason = done_reason::max_frames},
             stall_event{.stalled = false, .queued_ms = 10},
             error_event{.code = error_code::server_busy, .message = "busy", .fatal = true}}) {
        const auto text = encode_server_event(e);
        INFO(text);
        CHECK(parsed(text) == e);
    }
}

TEST_CASE("an invalid string never makes the encoder fail", "[protocol]") {
    const auto text = encode_server_event(error_event{.code = error_code::internal, .message = "bad \xFF byte"});
    CHECK_THAT(text, Catch::Contains("bad \xEF\xBF\xBD byte"));
}

TEST_CASE("events a client cannot read are errors", "[protocol]") {
    CHECK(std::get<protocol_error>(parse_server_event("nope")).code == error_code::bad_json);
    CHECK(std::get<protocol_error>(parse_server_event(R"({"type":"hello"})")).code == error_code::unknown_type);
    CHECK(std::get<protocol_error>(parse_server_event(R"({"type":"done","context":1,"reason":"why"})")).code ==
          error_code::bad_message);
    CHECK(std::get<protocol_error>(parse_server_event(R"({"type":"error","code":"nope","message":""})")).code ==
          error_code::bad_message);
}

}  // namespace
}  // namespace megatts

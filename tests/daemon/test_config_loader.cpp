#include "daemon/config/config_loader.h"

#include <catch2/catch.hpp>

#include <string>

namespace megatts {
namespace {

const std::filesystem::path base = "/etc/megatts";

result<server_config> parse(const std::string& text) { return parse_server_config(text, "test.toml", base); }

// The message of a parse that must fail.
std::string failure(const std::string& text) {
    auto r = parse(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::invalid_input);
    return r.err().message;
}

TEST_CASE("the shipped configs/megatts.toml parses to exactly the built-in defaults", "[config]") {
    auto loaded = load_server_config(MEGATTS_CONFIG_DIR "/megatts.toml");
    REQUIRE(loaded.ok());
    CHECK(*loaded == server_config{});
}

TEST_CASE("an empty file gives the defaults", "[config]") {
    auto r = parse("");
    REQUIRE(r.ok());
    CHECK(*r == server_config{});
}

TEST_CASE("every key is read into its member", "[config]") {
    auto r = parse(R"(
[server]
listen = "[::1]:0"
threads = 3
web_root = "site"
max_sessions = 5
drain_timeout_s = 7
start_timeout_s = 11
[model]
dir = "/models/cv06"
backend = "cuda"
warmup_text = "Hi."
vocoder_precision = "f32"
[engine]
slots = 3
max_positions = 512
lead_ms = 1000
first_audio_yield_ms = 0
join_lead_ms = 800
max_batch = 32
choice_margin_us = 250
[limits]
max_text_bytes = 100
max_message_bytes = 2048
queued_utterances = 2
input_queue_messages = 8
idle_timeout_s = 9
keepalive_timeout_s = 4
max_errors = 10
[send_queue]
soft_ms = 200
hard_ms = 400
stall_timeout_ms = 1000
max_events = 16
socket_buffer_bytes = 0
[opus]
frame_ms = 10
[log]
level = "debug"
)");
    REQUIRE(r.ok());
    const auto& c = *r;
    CHECK(c.server.listen == listen_address{"::1", 0});
    CHECK(c.server.threads == 3);
    CHECK(c.server.web_root == "/etc/megatts/site");
    CHECK(c.server.max_sessions == 5);
    CHECK(c.server.drain_timeout_s == 7);
    CHECK(c.server.start_timeout_s == 11);
    CHECK(c.model.dir == "/models/cv06");
    CHECK(c.model.backend == "cuda");
    CHECK(c.model.warmup_text == "Hi.");
    CHECK(c.model.vocoder_precision == "f32");
    CHECK(c.engine.slots == 3);
    CHECK(c.engine.max_positions == 512);
    CHECK(c.engine.lead_ms == 1000);
    CHECK(c.engine.first_audio_yield_ms == 0);
    CHECK(c.engine.join_lead_ms == 800);
    CHECK(c.engine.max_batch == 32);
    CHECK(c.engine.choice_margin_us == 250);
    CHECK(c.limits.max_text_bytes == 100);
    CHECK(c.limits.max_message_bytes == 2048);
    CHECK(c.limits.queued_utterances == 2);
    CHECK(c.limits.input_queue_messages == 8);
    CHECK(c.limits.idle_timeout_s == 9);
    CHECK(c.limits.keepalive_timeout_s == 4);
    CHECK(c.limits.max_errors == 10);
    CHECK(c.send_queue.soft_ms == 200);
    CHECK(c.send_queue.hard_ms == 400);
    CHECK(c.send_queue.stall_timeout_ms == 1000);
    CHECK(c.send_queue.max_events == 16);
    CHECK(c.send_queue.socket_buffer_bytes == 0);
    CHECK(c.opus.frame_ms == 10);
    CHECK(c.log.level == "debug");
}

TEST_CASE("unknown keys and sections are errors naming them", "[config]") {
    CHECK_THAT(failure("[server]\nlisten_port = 1\n"), Catch::Contains("'server.listen_port': unknown key"));
    CHECK_THAT(failure("[sever]\nlisten = \"a:1\"\n"), Catch::Contains("'sever.listen': unknown key"));
    CHECK_THAT(failure("[server.tls]\ncert = \"x\"\n"), Catch::Contains("'server.tls': unknown key"));
    CHECK_THAT(failure("threads = 2\n"), Catch::Contains("'threads': expected a [section]"));
}

TEST_CASE("a value of the wrong type is an error naming the key and both types", "[config]") {
    CHECK_THAT(failure("[server]\nthreads = \"2\"\n"),
               Catch::Contains("test.toml: 'server.threads': expected an integer, got string"));
    CHECK_THAT(failure("[send_queue]\nsoft_ms = 1.5\n"),
               Catch::Contains("'send_queue.soft_ms': expected an integer, got floating-point"));
    CHECK_THAT(failure("[model]\ndir = 3\n"), Catch::Contains("'model.dir': expected a string, got integer"));
}

TEST_CASE("out-of-range values and bad choices are errors naming the key", "[config]") {
    CHECK_THAT(failure("[server]\nmax_sessions = 0\n"), Catch::Contains("'server.max_sessions': 0 is out of range"));
    CHECK_THAT(failure("[opus]\nframe_ms = 15\n"), Catch::Contains("'opus.frame_ms': must be 10 or 20"));
    CHECK_THAT(failure("[model]\nbackend = \"gpu\"\n"),
               Catch::Contains("'model.backend': 'gpu' is not one of cpu, cuda"));
    CHECK_THAT(failure("[log]\nlevel = \"loud\"\n"), Catch::Contains("'log.level'"));
    CHECK_THAT(failure("[server]\nlisten = \"localhost\"\n"), Catch::Contains("'server.listen': listen address"));
    CHECK_THAT(failure("[model]\nwarmup_text = \"\"\n"), Catch::Contains("'model.warmup_text'"));
    CHECK_THAT(failure("[model]\nvocoder_precision = \"bf16\"\n"),
               Catch::Contains("'model.vocoder_precision': 'bf16' is not one of tf32, f32"));
    CHECK_THAT(failure("[engine]\nmax_positions = 100\n"),
               Catch::Contains("'engine.max_positions': 100 is out of range 256..65536"));
}

TEST_CASE("keys that must agree are checked together", "[config]") {
    CHECK_THAT(failure("[send_queue]\nsoft_ms = 500\nhard_ms = 500\n"),
               Catch::Contains("'send_queue.hard_ms': must be larger than send_queue.soft_ms (500)"));
    CHECK_THAT(failure("[limits]\nmax_text_bytes = 70000\n"),
               Catch::Contains("'limits.max_message_bytes': must be larger than limits.max_text_bytes"));
}

TEST_CASE("a TOML syntax error names the source, line and column", "[config]") {
    CHECK_THAT(failure("[server]\nthreads = = 2\n"), Catch::StartsWith("test.toml:2:"));
}

TEST_CASE("relative paths start at the config file's directory; absolute and empty ones stay", "[config]") {
    auto r = parse("[server]\nweb_root = \"../www/./page\"\n[model]\ndir = \"\"\n");
    REQUIRE(r.ok());
    CHECK(r->server.web_root == "/etc/www/page");
    CHECK(r->model.dir.empty());
}

TEST_CASE("a missing config file is not_found, naming it", "[config]") {
    auto r = load_server_config("/nonexistent/megatts.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::not_found);
    CHECK_THAT(r.err().message, Catch::Contains("/nonexistent/megatts.toml"));
}

TEST_CASE("listen addresses: IPv4, names, bracketed IPv6, port range", "[config]") {
    CHECK(parse_listen_address("127.0.0.1:8080")->port == 8080);
    CHECK(parse_listen_address("localhost:0")->host == "localhost");
    CHECK(*parse_listen_address("[::]:65535") == listen_address{"::", 65535});
    for (const char* bad : {"8080", ":8080", "host:", "host:65536", "host:-1", "host:80x", "::1:80", "[]:80"})
        CHECK_FALSE(parse_listen_address(bad).ok());
}

}  // namespace
}  // namespace megatts

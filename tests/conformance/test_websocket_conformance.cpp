// WebSocket conformance of the real `megatts serve` on 127.0.0.1 (RFC 6455), one test case per
// case family of the Autobahn|Testsuite that applies to a server: 1.x framing, 2.x pings and
// pongs, 3.x reserved bits, 4.x opcodes, 5.x fragmentation, 6.x UTF-8 handling, 7.x close
// handling, 9.x/10.x limits (our max_message_bytes), 12.x/13.x compression (not negotiated),
// and the opening handshake of RFC 6455 §4.2. Case numbers in the sections are Autobahn's.
//
// Autobahn's testee echoes; ours answers instead, and that answer is what the tests read: a
// text message {"type":"end","pad":...} (no utterance is open) gets the event error
// no_utterance, an empty or non-JSON one bad_json, a binary message bad_message (PROTOCOL.md
// §4.6). A protocol violation must fail the connection: the server's next frame is a close
// with the expected code, nothing answers the offending frame, and the TCP connection ends.
//
// Frames are written by tests/conformance/raw_websocket (byte for byte, masked or not, whole or
// in pieces). One server serves every case; every wait is bounded. Environment (set by meson):
// MEGATTS_BIN, MEGATTS_MODEL, MEGATTS_WORK_DIR.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/conformance/raw_websocket.h"
#include "tests/e2e/client/server_process.h"

namespace megatts::conformance {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto wait = 10s;
constexpr std::size_t max_message_bytes = 65536;  // the server's default limits.max_message_bytes

// The port of the server every case talks to, started on first use with the binary, model and
// work folder meson names. max_errors is high because most answers are error events.
std::uint16_t server_port() {
    static e2e::server_process process;
    static const std::uint16_t port = [] {
        const char* binary = std::getenv("MEGATTS_BIN");
        const char* model = std::getenv("MEGATTS_MODEL");
        const char* work_dir = std::getenv("MEGATTS_WORK_DIR");
        if (!binary || !model || !work_dir) FAIL("MEGATTS_BIN, MEGATTS_MODEL, MEGATTS_WORK_DIR: run through meson test");
        const auto work = fs::path(work_dir) / "conformance";
        fs::remove_all(work);
        fs::create_directories(work);
        std::ofstream(work / "megatts.toml") << "[server]\nlisten = \"127.0.0.1:0\"\nthreads = 2\nmax_sessions = 64\n"
                                                "[limits]\nmax_errors = 100000\n";
        auto started = process.start(binary, {"serve", "--config", (work / "megatts.toml").string(), "--model", model},
                                     work / "server.log", 60s);
        if (!started) FAIL(started.err().message);
        for (int attempt = 0; attempt < 600; ++attempt) {
            auto ready = raw_websocket::http_exchange(*started, "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", wait);
            if (ready && ready->starts_with("HTTP/1.1 200")) return *started;
            std::this_thread::sleep_for(100ms);
        }
        FAIL("the server did not become ready within 60 s; see " << (work / "server.log"));
        return std::uint16_t{0};
    }();
    return port;
}

ws_frame next_frame(raw_websocket& ws) {
    auto frame = ws.read_frame(wait);
    if (!frame) FAIL("no frame from the server: " << frame.err().message);
    return std::move(*frame);
}

// A connection past its `ready` event.
raw_websocket open() {
    auto ws = raw_websocket::connect(server_port());
    if (!ws) FAIL(ws.err().message);
    const auto ready = next_frame(*ws);
    REQUIRE(ready.opcode == opcode::text);
    REQUIRE(nlohmann::json::parse(ready.payload)["type"] == "ready");
    return std::move(*ws);
}

void send(raw_websocket& ws, std::uint8_t op, std::string_view payload, const frame_options& options = {}) {
    const auto sent = ws.send_frame(op, payload, options);
    if (!sent) FAIL("send: " << sent.err().message);
}

struct outgoing_frame {
    std::uint8_t op;
    std::string payload;
    frame_options options = {};
};

// Sends `frames` in order until a write is refused, and says how many went. A server that has
// closed (failing the connection, or echoing the client's close) may end the TCP connection
// while frames are still being written (a run of .ci/run failed so: "send: Broken pipe"); the
// close frame it sent must still be there to read.
std::size_t send_until_refused(raw_websocket& ws, std::span<const outgoing_frame> frames) {
    for (std::size_t i = 0; i < frames.size(); ++i)
        if (!ws.send_frame(frames[i].op, frames[i].payload, frames[i].options)) return i;
    return frames.size();
}

// A valid client message of exactly `size` bytes (at least 26) that the server answers with
// error no_utterance; `fill` pads it (any well-formed UTF-8 without '"' or '\').
std::string probe(std::size_t size, std::string_view fill = "x") {
    const std::string head = R"({"type":"end","pad":")";
    const std::string tail = R"("})";
    REQUIRE(size >= head.size() + tail.size());
    std::string pad;
    while (pad.size() + fill.size() <= size - head.size() - tail.size()) pad += fill;
    pad.append(size - head.size() - tail.size() - pad.size(), 'x');
    return head + pad + tail;
}

// The next frame is the server's answer: an error event with `code`.
void expect_answer(raw_websocket& ws, std::string_view code) {
    const auto frame = next_frame(ws);
    REQUIRE(frame.opcode == opcode::text);
    REQUIRE(frame.fin);
    const auto event = nlohmann::json::parse(frame.payload);
    CHECK(event["type"] == "error");
    CHECK(event["code"] == code);
    CHECK(event["fatal"] == false);
}

void expect_pong(raw_websocket& ws, std::string_view payload) {
    const auto frame = next_frame(ws);
    REQUIRE(frame.opcode == opcode::pong);
    CHECK(frame.fin);
    CHECK(frame.payload == payload);
}

std::uint16_t close_code_of(const ws_frame& frame) {
    REQUIRE(frame.payload.size() >= 2);
    return static_cast<std::uint16_t>(static_cast<std::uint8_t>(frame.payload[0]) << 8 |
                                      static_cast<std::uint8_t>(frame.payload[1]));
}

// The server's next frame is a close with `code`, then the TCP connection ends without
// anything else.
void expect_close(raw_websocket& ws, std::uint16_t code) {
    const auto frame = next_frame(ws);
    INFO("opcode " << int(frame.opcode) << ", payload '" << frame.payload << "'");
    REQUIRE(frame.opcode == opcode::close);
    CHECK(close_code_of(frame) == code);
    ws.shutdown_send();
    const auto after = ws.read_frame(wait);
    REQUIRE_FALSE(after.ok());
    CHECK(after.err().message == closed);
}

// The connection fails (RFC 6455 §7.1.7) with `code`, answering nothing.
void expect_failure(raw_websocket& ws, std::uint16_t code) { expect_close(ws, code); }

constexpr std::uint16_t protocol_error = 1002;
constexpr std::uint16_t invalid_payload = 1007;
constexpr std::uint16_t message_too_big = 1009;

// ---------------------------------------------------------------------------------------------

TEST_CASE("opening handshake (RFC 6455 4.2) and 12.x/13.x: compression offers are declined", "[conformance]") {
    const auto port = server_port();
    SECTION("101 with the RFC's accept value and the subprotocol echoed") {
        auto ws = open();
        CHECK_THAT(ws.handshake(), Catch::Contains("Sec-WebSocket-Protocol: megatts.v1", Catch::CaseSensitive::No));
    }
    SECTION("12.x/13.x: permessage-deflate is not negotiated, so RSV1 stays reserved") {
        auto ws = raw_websocket::connect(port, {"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"});
        REQUIRE(ws.ok());
        CHECK_THAT(ws->handshake(), !Catch::Contains("Sec-WebSocket-Extensions", Catch::CaseSensitive::No));
        next_frame(*ws);  // ready
        send(*ws, opcode::text, probe(40), {.rsv = 4});
        expect_failure(*ws, protocol_error);
    }
    const auto upgrade = [&](std::string_view key, std::string_view version) {
        auto head = raw_websocket::http_exchange(
            port,
            "GET /v1/tts HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + std::string(key) +
                std::string(version) + "\r\n",
            wait);
        if (!head) FAIL(head.err().message);
        return *head;
    };
    SECTION("an unsupported version is refused with 426 naming version 13") {
        const auto head = upgrade("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "Sec-WebSocket-Version: 8\r\n");
        CHECK(head.starts_with("HTTP/1.1 426"));
        CHECK_THAT(head, Catch::Contains("Sec-WebSocket-Version: 13", Catch::CaseSensitive::No));
    }
    SECTION("a missing or malformed key is refused with 400") {
        CHECK(upgrade("", "Sec-WebSocket-Version: 13\r\n").starts_with("HTTP/1.1 400"));
        CHECK(upgrade("Sec-WebSocket-Key: short\r\n", "Sec-WebSocket-Version: 13\r\n").starts_with("HTTP/1.1 400"));
    }
}

TEST_CASE("HTTP/1.1 before any upgrade: malformed 400, oversized 413, wrong body type 415, no upgrade 426", "[conformance]") {
    const auto status_of = [](std::string_view request) {
        auto head = raw_websocket::http_exchange(server_port(), request, wait);
        if (!head) FAIL(head.err().message);
        INFO(*head);
        CHECK_THAT(*head, Catch::Contains("Connection: close", Catch::CaseSensitive::No));
        return head->substr(0, 12);
    };
    CHECK(status_of("HELLO\r\n\r\n") == "HTTP/1.1 400");
    CHECK(status_of("GET / HTTP/1.1\r\nBad Field: x\r\n\r\n") == "HTTP/1.1 400");
    CHECK(status_of("POST /v1/audio/speech HTTP/1.1\r\nContent-Length: 1x\r\n\r\n") == "HTTP/1.1 400");
    CHECK(status_of("GET / HTTP/1.1\r\nX-Padding: " + std::string(9000, 'p') + "\r\n\r\n") == "HTTP/1.1 413");
    CHECK(status_of("POST /v1/audio/speech HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                    "Connection: close\r\n\r\n{}") == "HTTP/1.1 415");
    CHECK(status_of("GET /v1/tts HTTP/1.1\r\nConnection: close\r\n\r\n") == "HTTP/1.1 426");
}

TEST_CASE("1.x framing: text and binary messages at every payload-length encoding", "[conformance]") {
    auto ws = open();
    SECTION("1.1.x text, 7-, 16- and 64-bit lengths, up to max_message_bytes") {
        send(ws, opcode::text, "");
        expect_answer(ws, "bad_json");
        for (std::size_t size : {125u, 126u, 127u, 128u, 65535u, 65536u}) {
            INFO("payload " << size << " bytes");
            send(ws, opcode::text, probe(size));
            expect_answer(ws, "no_utterance");
        }
    }
    SECTION("1.1.7/1.1.8: 64 KiB of text written in pieces of 997 bytes") {
        send(ws, opcode::text, probe(max_message_bytes), {.write_chunk = 997});
        expect_answer(ws, "no_utterance");
    }
    SECTION("1.2.x binary, answered bad_message at every length") {
        for (std::size_t size : {0u, 125u, 126u, 127u, 128u, 65535u, 65536u}) {
            INFO("payload " << size << " bytes");
            send(ws, opcode::binary, std::string(size, '\xfe'));
            expect_answer(ws, "bad_message");
        }
    }
    SECTION("RFC 6455 5.2: a length not in its minimal encoding fails the connection") {
        const std::uint8_t form = GENERATE(126, 127);
        send(ws, opcode::text, probe(form == 126 ? 30 : 300), {.length_form = form});
        expect_failure(ws, protocol_error);
    }
    SECTION("RFC 6455 5.1: an unmasked client frame fails the connection") {
        send(ws, opcode::text, probe(30), {.masked = false});
        expect_failure(ws, protocol_error);
    }
}

TEST_CASE("2.x pings and pongs", "[conformance]") {
    auto ws = open();
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
    SECTION("2.1-2.4: a ping is answered by a pong with its payload (empty, text, binary, 125 bytes)") {
        for (const std::string& payload : {std::string(), std::string("Hello, world!"), bytes.substr(0, 125),
                                          std::string(125, '\xfe')}) {
            send(ws, opcode::ping, payload);
            expect_pong(ws, payload);
        }
    }
    SECTION("2.5: a ping of 126 bytes is a control frame too long") {
        send(ws, opcode::ping, std::string(126, 'p'));
        expect_failure(ws, protocol_error);
    }
    SECTION("2.6: a ping written byte by byte") {
        send(ws, opcode::ping, bytes.substr(0, 125), {.write_chunk = 1});
        expect_pong(ws, bytes.substr(0, 125));
    }
    SECTION("2.7-2.9: unsolicited pongs are ignored") {
        send(ws, opcode::pong, "");
        send(ws, opcode::pong, "unsolicited");
        send(ws, opcode::ping, "solicited");
        expect_pong(ws, "solicited");
        send(ws, opcode::text, probe(30));
        expect_answer(ws, "no_utterance");
    }
    SECTION("2.10/2.11: ten pings, at once and in pieces, get ten pongs in order") {
        std::string burst;
        for (int i = 0; i < 10; ++i) burst += encode_frame(opcode::ping, "ping " + std::to_string(i));
        REQUIRE(ws.send_bytes(burst).ok());
        for (int i = 0; i < 10; ++i) expect_pong(ws, "ping " + std::to_string(i));
        REQUIRE(ws.send_bytes(burst, 7).ok());
        for (int i = 0; i < 10; ++i) expect_pong(ws, "ping " + std::to_string(i));
    }
}

TEST_CASE("3.x reserved bits: any RSV bit without an extension fails the connection", "[conformance]") {
    const auto rsv = GENERATE(1, 2, 3, 4, 5, 6, 7);
    const auto op = GENERATE(opcode::text, opcode::binary, opcode::ping, opcode::close);
    INFO("RSV " << rsv << " on opcode " << int(op));
    auto ws = open();
    send(ws, opcode::text, probe(30));  // 3.2: a good message first is answered
    expect_answer(ws, "no_utterance");
    const std::string payload = op == opcode::close ? close_payload(1000) : op == opcode::text ? probe(30) : "x";
    send(ws, op, payload, {.rsv = static_cast<std::uint8_t>(rsv)});
    send(ws, opcode::ping, "after");  // must not be answered
    expect_failure(ws, protocol_error);
}

TEST_CASE("4.x opcodes: reserved data (3-7) and control (11-15) opcodes fail the connection", "[conformance]") {
    const auto op = GENERATE(3, 4, 5, 6, 7, 11, 12, 13, 14, 15);
    const auto with_payload = GENERATE(false, true);
    INFO("opcode " << op << (with_payload ? " with payload" : " empty"));
    auto ws = open();
    send(ws, opcode::text, probe(30));
    expect_answer(ws, "no_utterance");
    send(ws, static_cast<std::uint8_t>(op), with_payload ? "reserved" : "");
    send(ws, opcode::ping, "after");
    expect_failure(ws, protocol_error);
}

TEST_CASE("5.x fragmentation", "[conformance]") {
    auto ws = open();
    const std::string message = probe(64);
    const auto first = message.substr(0, 20);
    const auto second = message.substr(20);
    SECTION("5.1/5.2: fragmented control frames fail the connection") {
        const auto op = GENERATE(opcode::ping, opcode::pong);
        send(ws, op, "frag", {.fin = false});
        send(ws, opcode::continuation, "ment");
        expect_failure(ws, protocol_error);
    }
    SECTION("5.3-5.5: a text message in two fragments, whole, byte by byte, and apart") {
        send(ws, opcode::text, first, {.fin = false});
        send(ws, opcode::continuation, second);
        expect_answer(ws, "no_utterance");
        send(ws, opcode::text, first, {.fin = false, .write_chunk = 1});
        send(ws, opcode::continuation, second, {.write_chunk = 1});
        expect_answer(ws, "no_utterance");
        send(ws, opcode::text, first, {.fin = false});
        std::this_thread::sleep_for(100ms);  // the server waits for the rest, answering nothing
        send(ws, opcode::continuation, second);
        expect_answer(ws, "no_utterance");
    }
    SECTION("5.6-5.8, 5.19, 5.20: pings between fragments are answered at once; the message after") {
        send(ws, opcode::text, message.substr(0, 10), {.fin = false});
        send(ws, opcode::ping, "one");
        expect_pong(ws, "one");
        for (std::size_t at = 10; at < 50; at += 10) {
            send(ws, opcode::continuation, message.substr(at, 10), {.fin = false, .write_chunk = 3});
            send(ws, opcode::ping, "at " + std::to_string(at), {.write_chunk = 1});
            expect_pong(ws, "at " + std::to_string(at));
        }
        send(ws, opcode::continuation, message.substr(50));
        expect_answer(ws, "no_utterance");
    }
    SECTION("5.9-5.14: a continuation with nothing to continue fails the connection") {
        const auto fin = GENERATE(true, false);
        send(ws, opcode::continuation, "orphan", {.fin = fin});
        expect_failure(ws, protocol_error);
    }
    SECTION("5.15: a whole fragmented message, then an orphan continuation") {
        send(ws, opcode::text, first, {.fin = false});
        send(ws, opcode::continuation, second);
        expect_answer(ws, "no_utterance");
        send(ws, opcode::continuation, "orphan", {.fin = false});
        send(ws, opcode::continuation, "orphan");
        expect_failure(ws, protocol_error);
    }
    SECTION("5.17, 5.18: a new data frame while a message is unfinished fails the connection") {
        const auto op = GENERATE(opcode::text, opcode::binary);
        send(ws, opcode::text, first, {.fin = false});
        send(ws, op, second);
        expect_failure(ws, protocol_error);
    }
    SECTION("a fragmented binary message is one (refused) message") {
        send(ws, opcode::binary, "ab", {.fin = false});
        send(ws, opcode::continuation, "cd", {.fin = false});
        send(ws, opcode::continuation, "ef");
        expect_answer(ws, "bad_message");
    }
}

// Well-formed UTF-8 (6.2, 6.5, 6.6, 6.7, 6.11, 6.20-6.23 of Autobahn's list): boundaries of
// each sequence length, the last code point, non-characters, the replacement character.
const std::vector<std::string> well_formed = {
    "\x7f", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
    "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbe", "\xef\xbf\xbd", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5",
    "Hello-\xc2\xb5@\xc3\x9f\xc3\xb6\xc3\xa4\xc3\xbc\xc3\xa0\xc3\xa1-UTF-8!!",
};

// Ill-formed UTF-8 (6.3, 6.6, 6.8-6.10, 6.12-6.19, 6.21): lone continuation bytes, truncated
// sequences, impossible bytes, 5- and 6-byte forms, overlong forms, surrogates (lone and
// paired), code points above U+10FFFF.
const std::vector<std::string> ill_formed = {
    "\x80", "\xbf", "\x80\xbf\x80", "\xc0", "\xc2", "\xe0\xa0", "\xf0\x90\x80", "\xdf", "\xef\xbf",
    "\xfe", "\xff", "\xfe\xfe\xff\xff", "\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80",
    "\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xc1\xbf", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf",
    "\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xa0\x80\xed\xb0\x80", "\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf",
    "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64",
};

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char c : bytes) out += std::string{digits[c >> 4], digits[c & 15], ' '};
    return out;
}

TEST_CASE("6.x UTF-8 handling of text messages", "[conformance]") {
    SECTION("6.1: empty text frames, alone and as fragments, are an (empty) message") {
        auto ws = open();
        send(ws, opcode::text, "", {.fin = false});
        send(ws, opcode::continuation, "", {.fin = false});
        send(ws, opcode::continuation, "");
        expect_answer(ws, "bad_json");
        send(ws, opcode::text, "", {.fin = false});
        send(ws, opcode::continuation, probe(30));
        expect_answer(ws, "no_utterance");
    }
    SECTION("6.2, 6.5-6.7, 6.11, 6.20-6.23: well-formed UTF-8 is accepted, whole and cut at every byte") {
        auto ws = open();
        for (const auto& sequence : well_formed) {
            INFO(hex(sequence));
            const auto message = probe(30 + 4 * sequence.size(), sequence);
            send(ws, opcode::text, message);
            expect_answer(ws, "no_utterance");
            for (std::size_t at = 0; at < message.size(); at += 1) {
                const bool last = at + 1 == message.size();
                send(ws, at == 0 ? opcode::text : opcode::continuation, message.substr(at, 1), {.fin = last});
            }
            expect_answer(ws, "no_utterance");
        }
    }
    SECTION("6.3, 6.6, 6.8-6.10, 6.12-6.19, 6.21: ill-formed UTF-8 fails the connection with 1007") {
        const auto cut = GENERATE(false, true);
        for (const auto& sequence : ill_formed) {
            INFO(hex(sequence) << (cut ? " in one-byte fragments" : " in one frame"));
            auto ws = open();
            const auto message = probe(30 + 4 * sequence.size(), sequence);
            if (!cut) {
                send(ws, opcode::text, message);
            } else {
                // The server fails fast (6.4.x): it may close before the last fragments.
                std::vector<outgoing_frame> fragments;
                for (std::size_t at = 0; at < message.size(); ++at)
                    fragments.push_back({at == 0 ? opcode::text : opcode::continuation, message.substr(at, 1),
                                         {.fin = at + 1 == message.size()}});
                const auto sent = send_until_refused(ws, fragments);
                INFO("a write refused at byte " << sent << ", the ill-formed bytes at " << message.find(sequence));
                REQUIRE(sent > message.find(sequence));
            }
            expect_failure(ws, invalid_payload);
        }
    }
    SECTION("6.4.1/6.4.2: fail fast: an ill-formed fragment closes before the message is finished") {
        auto ws = open();
        send(ws, opcode::text, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5", {.fin = false});
        send(ws, opcode::continuation, "\xf4\x90\x80\x80", {.fin = false});
        expect_failure(ws, invalid_payload);  // without the rest of the message ever being sent
    }
    SECTION("6.4.3/6.4.4: fail fast inside one frame written in pieces") {
        auto ws = open();
        const auto frame = encode_frame(opcode::text, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80"
                                                      "\x65\x64\x69\x74\x65\x64");
        const auto past_bad_bytes = frame.size() - 6;  // header and payload up to the ill-formed sequence
        REQUIRE(ws.send_bytes(frame.substr(0, past_bad_bytes), 1).ok());
        expect_failure(ws, invalid_payload);
    }
}

TEST_CASE("7.x close handling", "[conformance]") {
    auto ws = open();
    SECTION("7.1.1: a message, then close: the message is answered, the close echoed") {
        send(ws, opcode::text, probe(30));
        send(ws, opcode::close, close_payload(1000));
        expect_answer(ws, "no_utterance");
        expect_close(ws, 1000);
    }
    SECTION("7.1.2-7.1.5: nothing after the client's close is read: a second close, a ping, a message, a fragment") {
        send(ws, opcode::text, probe(30).substr(0, 10), {.fin = false});
        send(ws, opcode::close, close_payload(1000));
        // Once it has echoed the close the server may end the TCP connection before these.
        const outgoing_frame after[] = {{opcode::close, close_payload(1000)}, {opcode::ping, "after close"},
                                        {opcode::text, probe(30)}};
        send_until_refused(ws, after);
        expect_close(ws, 1000);
    }
    SECTION("7.3.1: an empty close is answered with a close 1000 (normal)") {
        send(ws, opcode::close, "");
        expect_close(ws, 1000);
    }
    SECTION("7.3.2: a close payload of one byte fails the connection") {
        send(ws, opcode::close, "\x03");
        expect_failure(ws, protocol_error);
    }
    SECTION("7.3.3-7.3.5: close 1000 with no reason, a reason, a reason of 123 bytes: echoed") {
        const std::string reason = GENERATE(std::string(), std::string("Hello World!"), std::string(123, 'r'));
        send(ws, opcode::close, close_payload(1000, reason));
        expect_close(ws, 1000);
    }
    SECTION("7.3.6: a close reason of 124 bytes makes a control frame too long") {
        send(ws, opcode::close, close_payload(1000, std::string(124, 'r')));
        expect_failure(ws, protocol_error);
    }
    SECTION("7.5.1: a close reason that is not UTF-8 fails the connection (1002 or 1007 for Autobahn)") {
        send(ws, opcode::close, close_payload(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80"));
        expect_failure(ws, protocol_error);
    }
    SECTION("7.7.x, 7.13.x: valid close codes are echoed") {
        const int code = GENERATE(1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999);
        INFO("close code " << code);
        send(ws, opcode::close, close_payload(static_cast<std::uint16_t>(code)));
        expect_close(ws, static_cast<std::uint16_t>(code));
    }
    SECTION("7.9.x: invalid close codes fail the connection") {
        const int code = GENERATE(0, 999, 1004, 1005, 1006, 1014, 1015, 1016, 1100, 2000, 2999);
        INFO("close code " << code);
        send(ws, opcode::close, close_payload(static_cast<std::uint16_t>(code)));
        expect_failure(ws, protocol_error);
    }
}

TEST_CASE("9.x, 10.x limits: max_message_bytes, whole or fragmented; lengths announced beyond it", "[conformance]") {
    auto ws = open();
    SECTION("9.x/10.1: a message of exactly max_message_bytes in fragments of 1300 bytes is answered") {
        const auto message = probe(max_message_bytes);
        for (std::size_t at = 0; at < message.size(); at += 1300)
            send(ws, at == 0 ? opcode::text : opcode::continuation, message.substr(at, 1300),
                 {.fin = at + 1300 >= message.size()});
        expect_answer(ws, "no_utterance");
    }
    SECTION("one byte more, in one frame: 1009") {
        send(ws, opcode::text, probe(max_message_bytes + 1));
        expect_failure(ws, message_too_big);
    }
    SECTION("one byte more, in fragments: 1009 when the fragment that passes the limit arrives") {
        const auto message = probe(max_message_bytes + 1);
        send(ws, opcode::text, message.substr(0, max_message_bytes), {.fin = false});
        send(ws, opcode::continuation, message.substr(max_message_bytes));
        expect_failure(ws, message_too_big);
    }
    SECTION("a frame announcing 2^62 bytes is refused from its header, nothing allocated or awaited") {
        std::string header = "\x81\xff";  // FIN text, masked, 64-bit length
        for (int shift = 56; shift >= 0; shift -= 8) header += static_cast<char>(((std::uint64_t{1} << 62) >> shift) & 0xff);
        header += "\x01\x02\x03\x04";
        REQUIRE(ws.send_bytes(header).ok());
        expect_failure(ws, message_too_big);
    }
}

TEST_CASE("after every violation above, the server still serves", "[conformance]") {
    auto ws = open();
    send(ws, opcode::text, probe(30));
    expect_answer(ws, "no_utterance");
    auto health = raw_websocket::http_exchange(server_port(), "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", wait);
    REQUIRE(health.ok());
    CHECK(health->starts_with("HTTP/1.1 200"));
}

}  // namespace
}  // namespace megatts::conformance

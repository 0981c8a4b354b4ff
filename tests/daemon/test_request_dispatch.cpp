#include "daemon/http/request_dispatch.h"

#include <catch2/catch.hpp>

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/parser.hpp>

#include <filesystem>
#include <string>

#include "daemon/http/websocket_key.h"
#include "daemon/server/server_metrics.h"
#include "pipeline/telemetry/metrics_registry.h"

namespace megatts {
namespace {

namespace fs = std::filesystem;

// A server that is still loading its model, as every test here needs.
struct loading_server {
    metrics_registry registry;
    server_context context{server_config{}, fs::canonical(fs::temp_directory_path()), {"test", true}, registry,
                           *server_metrics::create(registry)};
};

http_request parse(std::string_view bytes) {
    http::request_parser<http::string_body> parser;
    boost::beast::error_code ec;
    parser.eager(true);
    parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    REQUIRE_FALSE(ec);
    REQUIRE(parser.is_done());
    return parser.release();
}

// The answer as the bytes that would leave: status line, headers, body.
std::string serialized(http::message_generator message) {
    std::string out;
    boost::beast::error_code ec;
    while (!message.is_done()) {
        const auto buffers = message.prepare(ec);
        REQUIRE_FALSE(ec);
        out += boost::beast::buffers_to_string(buffers);
        message.consume(boost::asio::buffer_size(buffers));
    }
    return out;
}

std::string upgrade_to(std::string_view target, std::string_view protocols,
                       std::string_view key = "dGhlIHNhbXBsZSBub25jZQ==") {
    std::string request = "GET " + std::string(target) +
                          " HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: " + std::string(key) + "\r\nSec-WebSocket-Version: 13\r\n";
    if (!protocols.empty()) request += "Sec-WebSocket-Protocol: " + std::string(protocols) + "\r\n";
    return request + "\r\n";
}

TEST_CASE("requests Beast cannot parse are answered 400 or 413; a peer that left is not", "[http]") {
    const auto answer = [](http::error e) {
        auto response = read_failure_response(http::make_error_code(e), 65536);
        REQUIRE(response);
        CHECK_FALSE(response->keep_alive());
        return *response;
    };
    for (const auto e : {http::error::bad_method, http::error::bad_target, http::error::bad_version,
                         http::error::bad_field, http::error::bad_content_length, http::error::bad_chunk,
                         http::error::multiple_content_length}) {
        const auto response = answer(e);
        CHECK(response.result() == http::status::bad_request);
        CHECK_THAT(response.body(), Catch::Contains(R"("code":"bad_request")"));
        CHECK_THAT(response.body(), Catch::Contains("malformed HTTP request"));
    }
    CHECK(answer(http::error::header_limit).result() == http::status::payload_too_large);
    const auto body = answer(http::error::body_limit);
    CHECK(body.result() == http::status::payload_too_large);
    CHECK_THAT(body.body(), Catch::Contains("65536"));
    CHECK_FALSE(read_failure_response(http::make_error_code(http::error::end_of_stream), 65536));
    CHECK_FALSE(read_failure_response(http::make_error_code(http::error::partial_message), 65536));
    CHECK_FALSE(read_failure_response(boost::asio::error::connection_reset, 65536));
}

TEST_CASE("upgrades: a permanent refusal comes before the not-ready one", "[http]") {
    loading_server s;
    const auto refusal = [&](std::string_view target, std::string_view protocols,
                             std::string_view key = "dGhlIHNhbXBsZSBub25jZQ==") {
        auto action = dispatch_request(parse(upgrade_to(target, protocols, key)), s.context);
        REQUIRE(std::holds_alternative<http::message_generator>(action));
        return serialized(std::move(std::get<http::message_generator>(action)));
    };
    CHECK(refusal("/ws", "megatts.v1").starts_with("HTTP/1.1 404"));
    const auto bad_key = refusal("/v1/tts", "megatts.v1", "short");
    CHECK(bad_key.starts_with("HTTP/1.1 400"));
    CHECK_THAT(bad_key, Catch::Contains("Sec-WebSocket-Key"));
    const auto wrong_protocol = refusal("/v1/tts", "chat");
    CHECK(wrong_protocol.starts_with("HTTP/1.1 400"));
    CHECK_THAT(wrong_protocol, Catch::Contains("protocol_mismatch"));
    const auto loading = refusal("/v1/tts?x=1", "chat, megatts.v1");
    CHECK(loading.starts_with("HTTP/1.1 503"));
    CHECK_THAT(loading, Catch::Contains("not_ready"));
    CHECK(refusal("/v1/tts", "").starts_with("HTTP/1.1 503"));
}

TEST_CASE("a Sec-WebSocket-Key is 16 bytes in base64", "[http]") {
    CHECK(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ=="));  // RFC 6455 1.3
    CHECK(valid_websocket_key("AAAAAAAAAAAAAAAAAAAAAA=="));
    CHECK(valid_websocket_key("+/+/+/+/+/+/+/+/+/+/+w=="));
    CHECK_FALSE(valid_websocket_key(""));
    CHECK_FALSE(valid_websocket_key("short"));
    CHECK_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ"));     // no padding
    CHECK_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQ==="));  // 25 characters
    CHECK_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZR=="));  // bits past the 16th byte
    CHECK_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25j*Q=="));  // not base64
    CHECK_FALSE(valid_websocket_key("dGhlIHNhbXBsZSBub25jZQA="));  // 17 bytes
}

TEST_CASE("speech requests are handed over; everything else is routed", "[http]") {
    loading_server s;
    const auto speech = parse("POST /v1/audio/speech HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}");
    CHECK(std::holds_alternative<speech_handover>(dispatch_request(speech, s.context)));
    auto health = dispatch_request(parse("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"), s.context);
    REQUIRE(std::holds_alternative<http::message_generator>(health));
    CHECK(serialized(std::move(std::get<http::message_generator>(health))).starts_with("HTTP/1.1 200"));
    auto get_speech = dispatch_request(parse("GET /v1/audio/speech HTTP/1.1\r\nHost: a\r\n\r\n"), s.context);
    REQUIRE(std::holds_alternative<http::message_generator>(get_speech));
    CHECK(serialized(std::move(std::get<http::message_generator>(get_speech))).starts_with("HTTP/1.1 405"));
}

}  // namespace
}  // namespace megatts

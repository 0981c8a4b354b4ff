// Fuzz target: raw bytes of an HTTP/1.1 connection through Beast's request parser (the
// server's limits: 8 KiB of header, limits.max_message_bytes of body) into what
// http_session does with them, without a socket: read_failure_response for what does not
// parse, dispatch_request for what does (routes, static files under web/, refused upgrades),
// parse_speech_request for the body of POST /v1/audio/speech. Pipelined requests are read
// one after another, as keep-alive does. The server is in its loading phase (no model).
// Properties: never crashes; every answer serializes; no upgrade is accepted while loading;
// an unparsable request is answered unless the bytes simply ran out.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <variant>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>

#include "daemon/config/server_config.h"
#include "daemon/http/request_dispatch.h"
#include "daemon/http/speech_request.h"
#include "daemon/server/server_context.h"
#include "daemon/server/server_metrics.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

namespace {

// Requests read from one input at most: enough for pipelining, bounded per input.
constexpr int max_requests = 8;

server_metrics metrics_on(metrics_registry& registry) {
    auto metrics = server_metrics::create(registry);
    FUZZ_CHECK(metrics.ok(), "the server's metrics register");
    return *metrics;
}

server_context& server() {
    static metrics_registry registry;
    static const server_config config;
    static server_context context(config, std::filesystem::canonical(MEGATTS_WEB_DIR), {"fuzz", true}, registry,
                                  metrics_on(registry));
    return context;
}

void serialize(http::message_generator message) {
    boost::beast::error_code ec;
    while (!message.is_done()) {
        const auto buffers = message.prepare(ec);
        FUZZ_CHECK(!ec, "an answer serializes");
        message.consume(boost::asio::buffer_size(buffers));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto& context = server();
    const auto max_message_bytes = context.config().limits.max_message_bytes;
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    for (int n = 0; n < max_requests && !rest.empty(); ++n) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(static_cast<std::uint64_t>(max_message_bytes));
        parser.eager(true);
        boost::beast::error_code ec;
        while (!parser.is_done() && !ec) {
            const auto used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
            rest.remove_prefix(used);
            // need_more: the parser has seen every byte left and wants more than those. It may
            // not be given the same bytes again (as a socket read never does: Beast asserts
            // so), and the input has no more: the client closed. Nothing consumed and no error:
            // the same.
            if (ec == http::error::need_more || (!ec && used == 0 && !parser.is_done())) {
                parser.put_eof(ec);
                break;
            }
        }
        if (ec) {
            auto answer = read_failure_response(ec, max_message_bytes);
            FUZZ_CHECK(answer || ec == http::error::partial_message || ec == http::error::end_of_stream,
                       "a request that does not parse is answered");
            if (answer) serialize(std::move(*answer));
            return 0;
        }
        FUZZ_CHECK(parser.is_done(), "a request without error is complete");
        const auto request = parser.release();
        auto action = dispatch_request(request, context);
        FUZZ_CHECK(!std::holds_alternative<websocket_handover>(action), "no upgrade while the model loads");
        if (std::holds_alternative<speech_handover>(action)) {
            (void)parse_speech_request(request.body(), static_cast<std::size_t>(context.config().limits.max_text_bytes));
            continue;
        }
        const bool keep_alive = request.keep_alive();
        serialize(std::move(std::get<http::message_generator>(action)));
        if (!keep_alive) return 0;
    }
    return 0;
}

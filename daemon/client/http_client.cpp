#include "tests/e2e/client/http_client.h"

#include <algorithm>
#include <cctype>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace megatts::e2e {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

constexpr std::uint64_t max_body_bytes = 64ull << 20;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace

result<http_reply> http_fetch(std::uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body, const std::map<std::string, std::string>& headers,
                              std::chrono::milliseconds deadline) {
    net::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(deadline);
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    if (!body.empty()) request.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    request.prepare_payload();

    http::response_parser<http::string_body> parser;
    parser.body_limit(max_body_bytes);
    beast::flat_buffer buffer;
    beast::error_code failure;
    stream.async_connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), [&](beast::error_code ec) {
        if (ec) {
            failure = ec;
            return;
        }
        http::async_write(stream, request, [&](beast::error_code ec, std::size_t) {
            if (ec) {
                failure = ec;
                return;
            }
            if (request.method() == http::verb::head) parser.skip(true);
            http::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) { failure = ec; });
        });
    });
    ioc.run();
    if (failure) return make_error(error_kind::io, method + " " + target + ": " + failure.message());
    auto response = parser.release();
    http_reply reply{.status = static_cast<int>(response.result_int()), .body = std::move(response.body()), .chunked = response.chunked()};
    for (const auto& field : response) reply.headers[lower(std::string(field.name_string()))] = field.value();
    beast::error_code ignored;
    stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    return reply;
}

}  // namespace megatts::e2e

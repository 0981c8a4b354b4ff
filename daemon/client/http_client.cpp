#include "daemon/client/http_client.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "daemon/client/host_port.h"

namespace megatts::client {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

constexpr std::uint64_t max_body_bytes = 64ull << 20;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// One request in flight: everything its asynchronous steps need, kept alive by them.
struct exchange : std::enable_shared_from_this<exchange> {
    exchange(net::any_io_executor executor, http_request_spec s, std::function<void(result<http_reply>)> h)
        : stream(std::move(executor)), spec(std::move(s)), handler(std::move(h)) {}

    void start() {
        beast::error_code ec;
        const auto address = net::ip::make_address(spec.host, ec);
        if (ec) {
            fail(ec);
            return;
        }
        request = {http::string_to_verb(spec.method), spec.target, 11};
        request.set(http::field::host, host_port(spec.host, spec.port));
        if (!spec.body.empty()) request.set(http::field::content_type, "application/json");
        for (const auto& [name, value] : spec.headers) request.set(name, value);
        request.body() = spec.body;
        request.prepare_payload();
        parser.body_limit(max_body_bytes);
        if (request.method() == http::verb::head) parser.skip(true);
        stream.expires_after(spec.deadline);
        stream.async_connect(net::ip::tcp::endpoint(address, spec.port), [self = shared_from_this()](beast::error_code ec) {
            if (ec) return self->fail(ec);
            http::async_write(self->stream, self->request, [self](beast::error_code ec, std::size_t) {
                if (ec) return self->fail(ec);
                http::async_read(self->stream, self->buffer, self->parser,
                                 [self](beast::error_code ec, std::size_t) { self->finish(ec); });
            });
        });
    }

    void fail(beast::error_code ec) {
        auto h = std::move(handler);
        net::post(stream.get_executor(), [h = std::move(h), what = spec.method + " " + spec.target + ": " + ec.message()] {
            h(make_error(error_kind::io, what));
        });
    }

    void finish(beast::error_code ec) {
        if (ec) return fail(ec);
        auto response = parser.release();
        http_reply reply{.status = static_cast<int>(response.result_int()),
                         .body = std::move(response.body()),
                         .chunked = response.chunked()};
        for (const auto& field : response) reply.headers[lower(std::string(field.name_string()))] = field.value();
        beast::error_code ignored;
        stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
        stream.close();
        handler(std::move(reply));
    }

    beast::tcp_stream stream;
    http_request_spec spec;
    std::function<void(result<http_reply>)> handler;
    http::request<http::string_body> request;
    http::response_parser<http::string_body> parser;
    beast::flat_buffer buffer;
};

}  // namespace

void async_http_fetch(net::any_io_executor executor, http_request_spec spec,
                      std::function<void(result<http_reply>)> handler) {
    std::make_shared<exchange>(std::move(executor), std::move(spec), std::move(handler))->start();
}

result<http_reply> http_fetch(http_request_spec spec) {
    net::io_context ioc;
    std::optional<result<http_reply>> outcome;
    async_http_fetch(ioc.get_executor(), std::move(spec), [&](result<http_reply> r) { outcome.emplace(std::move(r)); });
    ioc.run();
    return std::move(*outcome);
}

result<http_reply> http_fetch(std::uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body, const std::map<std::string, std::string>& headers,
                              std::chrono::milliseconds deadline) {
    return http_fetch(
        {.port = port, .method = method, .target = target, .body = body, .headers = headers, .deadline = deadline});
}

}  // namespace megatts::client

#include "daemon/http/http_session.h"

#include <chrono>

#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/error_response.h"
#include "daemon/http/http_routes.h"
#include "daemon/http/speech_session.h"
#include "daemon/protocol/subprotocol.h"
#include "daemon/server/websocket_session.h"

namespace megatts {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

// Every Sec-WebSocket-Protocol header of the request, joined with commas.
std::string offered_subprotocols(const http_request& request) {
    std::string offered;
    const auto [first, last] = request.equal_range(http::field::sec_websocket_protocol);
    for (auto field = first; field != last; ++field) {
        if (!offered.empty()) offered += ',';
        offered += field->value();
    }
    return offered;
}

}  // namespace

http_session::http_session(beast::tcp_stream&& stream, io_strand strand, server_context& server,
                           beast::flat_buffer buffer)
    : stream_(std::move(stream)), strand_(std::move(strand)), server_(server), buffer_(std::move(buffer)) {}

void http_session::run() {
    net::dispatch(strand_, beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
    parser_.emplace();
    parser_->body_limit(static_cast<std::uint64_t>(server_.config().limits.max_message_bytes));
    stream_.expires_after(std::chrono::seconds(server_.config().limits.keepalive_timeout_s));
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(beast::error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream) {
        close();
        return;
    }
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
        http_request request;
        request.keep_alive(false);
        send(error_response(request, http::status::payload_too_large, error_code::payload_too_large,
                            "the request is larger than " +
                                std::to_string(server_.config().limits.max_message_bytes) + " bytes"));
        return;
    }
    if (ec) {
        spdlog::debug("http read ended: {}", ec.message());
        return;
    }
    auto request = parser_->release();
    const auto path = target_path(request.target());
    if (websocket::is_upgrade(request)) {
        upgrade(std::move(request));
        return;
    }
    if (path == speech_path && request.method() == http::verb::post) {
        server_.metrics().request(http_route::speech);
        stream_.expires_never();
        std::make_shared<speech_session>(std::move(stream_), strand_, server_, std::move(buffer_))
            ->run(std::move(request));
        return;
    }
    send(route_request(request, server_));
}

void http_session::upgrade(http_request request) {
    server_.metrics().request(http_route::websocket);
    if (target_path(request.target()) != tts_path) {
        send(error_response(request, http::status::not_found, error_code::not_found,
                            "WebSocket is served at " + std::string(tts_path)));
        return;
    }
    if (!server_.service_if_accepting()) {
        send(error_response(request, http::status::service_unavailable, error_code::not_ready,
                            "the server is " + std::string(server_phase_name(server_.phase()))));
        return;
    }
    const auto offer = negotiate_subprotocol(offered_subprotocols(request));
    if (offer == subprotocol_offer::refused) {
        send(error_response(request, http::status::bad_request, error_code::protocol_mismatch,
                            "this server speaks the subprotocol megatts.v1 only"));
        return;
    }
    std::make_shared<websocket_session>(std::move(stream_), strand_, server_, offer == subprotocol_offer::accepted)
        ->run(std::move(request));
}

void http_session::send(http::message_generator message) {
    const bool keep_alive = message.keep_alive();
    beast::async_write(stream_, std::move(message),
                       beast::bind_front_handler(&http_session::on_write, shared_from_this(), keep_alive));
}

void http_session::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
    if (ec) {
        spdlog::debug("http write failed: {}", ec.message());
        return;
    }
    if (!keep_alive) {
        close();
        return;
    }
    do_read();
}

void http_session::close() {
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace megatts

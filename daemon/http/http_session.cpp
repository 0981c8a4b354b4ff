#include "daemon/http/http_session.h"

#include <chrono>

#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/request_dispatch.h"
#include "daemon/http/speech_session.h"
#include "daemon/server/websocket_session.h"

namespace megatts {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

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
    if (ec) {
        if (auto answer = read_failure_response(ec, server_.config().limits.max_message_bytes)) {
            server_.metrics().request(http_route::other);
            send(std::move(*answer));
        } else if (ec == http::error::end_of_stream) {
            close();
        } else {
            spdlog::debug("http read ended: {}", ec.message());
        }
        return;
    }
    auto request = parser_->release();
    auto action = dispatch_request(request, server_);
    if (const auto* upgrade = std::get_if<websocket_handover>(&action)) {
        std::make_shared<websocket_session>(std::move(stream_), strand_, server_, upgrade->subprotocol_negotiated)
            ->run(std::move(request));
        return;
    }
    if (std::holds_alternative<speech_handover>(action)) {
        stream_.expires_never();
        std::make_shared<speech_session>(std::move(stream_), strand_, server_, std::move(buffer_))
            ->run(std::move(request));
        return;
    }
    send(std::move(std::get<http::message_generator>(action)));
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

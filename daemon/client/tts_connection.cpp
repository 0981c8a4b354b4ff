#include "daemon/client/tts_connection.h"

#include <span>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/field.hpp>

#include "daemon/client/host_port.h"

namespace megatts::client {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

}  // namespace

tts_connection::tts_connection(net::any_io_executor executor) : ws_(std::move(executor)) {}

void tts_connection::async_connect(const client_options& options, done_handler handler) {
    auto& socket = beast::get_lowest_layer(ws_).socket();
    beast::error_code ec;
    const auto address = net::ip::make_address(options.host, ec);
    if (ec) {
        net::post(ws_.get_executor(), [handler = std::move(handler), host = options.host, ec] {
            handler(make_error(error_kind::invalid_input, "host " + host + ": " + ec.message()));
        });
        return;
    }
    const tcp::endpoint endpoint(address, options.port);
    socket.open(endpoint.protocol(), ec);
    if (!ec && options.receive_buffer_bytes > 0)
        socket.set_option(net::socket_base::receive_buffer_size(options.receive_buffer_bytes), ec);
    if (ec) {
        net::post(ws_.get_executor(), [handler = std::move(handler), ec] {
            handler(make_error(error_kind::io, "socket: " + ec.message()));
        });
        return;
    }
    if (!options.subprotocol.empty()) {
        ws_.set_option(websocket::stream_base::decorator([p = options.subprotocol](websocket::request_type& r) {
            r.set(beast::http::field::sec_websocket_protocol, p);
        }));
    }
    host_header_ = host_port(options.host, options.port);
    path_ = options.path;
    socket.async_connect(endpoint, [this, handler = std::move(handler)](beast::error_code ec) mutable {
        if (ec) {
            handler(make_error(error_kind::unavailable, "connect: " + ec.message()));
            return;
        }
        beast::error_code ignored;
        // Client messages are small and latency-bound.
        beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true), ignored);
        ws_.async_handshake(handshake_response_, host_header_, path_,
                            [this, handler = std::move(handler)](beast::error_code ec) {
                                handshake_status_ = static_cast<int>(handshake_response_.result_int());
                                if (ec) {
                                    handler(make_error(error_kind::unavailable,
                                                       "handshake: " + ec.message() + " (HTTP " +
                                                           std::to_string(handshake_status_) + ")"));
                                    return;
                                }
                                handler(result<void>{});
                            });
    });
}

void tts_connection::async_send(std::string payload, bool binary, done_handler handler) {
    write_payload_ = std::move(payload);
    ws_.binary(binary);
    ws_.async_write(net::buffer(write_payload_), [handler = std::move(handler)](beast::error_code ec, std::size_t) {
        if (ec) {
            handler(make_error(error_kind::io, "send: " + ec.message()));
            return;
        }
        handler(result<void>{});
    });
}

void tts_connection::async_receive(receive_handler handler) {
    read_buffer_.clear();
    ws_.async_read(read_buffer_, [this, handler = std::move(handler)](beast::error_code ec, std::size_t) {
        // A close frame that arrived counts even if answering it failed: after a protocol
        // violation the server (Beast's teardown) may reset the connection right after it.
        const auto& reason = ws_.reason();
        if (ec == websocket::error::closed || (ec && reason.code != websocket::close_code::none)) {
            handler(received{received_close{static_cast<std::uint16_t>(reason.code),
                                            std::string(reason.reason.data(), reason.reason.size())}});
            return;
        }
        if (ec) {
            handler(make_error(error_kind::io, "receive: " + ec.message()));
            return;
        }
        const auto data = read_buffer_.cdata();
        handler(decode_received(ws_.got_text(),
                                std::span(static_cast<const std::uint8_t*>(data.data()), data.size()),
                                std::chrono::steady_clock::now()));
    });
}

void tts_connection::async_close(done_handler handler) {
    ws_.async_close(websocket::close_code::normal, [handler = std::move(handler)](beast::error_code ec) {
        if (ec) {
            handler(make_error(error_kind::io, "close: " + ec.message()));
            return;
        }
        handler(result<void>{});
    });
}

void tts_connection::abort() {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
}

}  // namespace megatts::client

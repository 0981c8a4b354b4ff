#include "tests/e2e/client/tts_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace megatts::e2e {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

}  // namespace

struct tts_client::state {
    net::io_context ioc;
    websocket::stream<beast::tcp_stream> ws{ioc};
    beast::flat_buffer buffer;

    // Runs one asynchronous operation to completion within `timeout`; past it the socket is
    // closed, which completes the operation with an error.
    template <class Initiate>
    beast::error_code run(std::chrono::milliseconds timeout, Initiate&& initiate) {
        beast::error_code result = net::error::would_block;
        ioc.restart();
        initiate([&result](beast::error_code ec, auto&&...) { result = ec; });
        ioc.run_for(timeout);
        if (result == net::error::would_block) {
            beast::get_lowest_layer(ws).socket().close();
            ioc.run_for(std::chrono::seconds(1));
            return net::error::timed_out;
        }
        return result;
    }
};

tts_client::tts_client(std::unique_ptr<state> s) : state_(std::move(s)) {}
tts_client::tts_client(tts_client&&) noexcept = default;
tts_client& tts_client::operator=(tts_client&&) noexcept = default;
tts_client::~tts_client() = default;

result<tts_client> tts_client::connect(const client_options& options) {
    auto s = std::make_unique<state>();
    auto& socket = beast::get_lowest_layer(s->ws).socket();
    beast::error_code ec;
    const auto address = net::ip::make_address(options.host, ec);
    if (ec) return make_error(error_kind::invalid_input, options.host + ": " + ec.message());
    const tcp::endpoint endpoint(address, options.port);
    if (socket.open(endpoint.protocol(), ec); ec) return make_error(error_kind::io, "socket: " + ec.message());
    if (options.receive_buffer_bytes > 0)
        socket.set_option(net::socket_base::receive_buffer_size(options.receive_buffer_bytes), ec);
    ec = s->run(options.timeout, [&](auto handler) { socket.async_connect(endpoint, handler); });
    if (ec) return make_error(error_kind::unavailable, "connect: " + ec.message());
    socket.set_option(tcp::no_delay(true), ec);  // client messages are small and latency-bound

    if (!options.subprotocol.empty()) {
        s->ws.set_option(websocket::stream_base::decorator([p = options.subprotocol](websocket::request_type& r) {
            r.set(beast::http::field::sec_websocket_protocol, p);
        }));
    }
    websocket::response_type response;
    const auto host = options.host + ":" + std::to_string(options.port);
    ec = s->run(options.timeout, [&](auto handler) { s->ws.async_handshake(response, host, options.path, handler); });
    if (ec)
        return make_error(error_kind::unavailable, "handshake: " + ec.message() + " (HTTP " +
                                                       std::to_string(response.result_int()) + ")");
    return tts_client(std::move(s));
}

result<void> tts_client::send(const client_message& message, std::chrono::milliseconds timeout) {
    return send_raw(encode_client_message(message), false, timeout);
}

result<void> tts_client::send_raw(const std::string& payload, bool binary, std::chrono::milliseconds timeout) {
    state_->ws.binary(binary);
    const auto ec = state_->run(timeout, [&](auto handler) { state_->ws.async_write(net::buffer(payload), handler); });
    if (ec) return make_error(error_kind::io, "send: " + ec.message());
    return {};
}

result<received> tts_client::receive(std::chrono::milliseconds timeout) {
    auto& s = *state_;
    s.buffer.clear();
    const auto ec = s.run(timeout, [&](auto handler) { s.ws.async_read(s.buffer, handler); });
    // A close frame that arrived counts even if answering it failed: after a protocol violation
    // the server (Beast's teardown) may reset the connection right after its close frame.
    if (ec == websocket::error::closed || (ec && s.ws.reason().code != websocket::close_code::none))
        return received{received_close{static_cast<std::uint16_t>(s.ws.reason().code),
                                       std::string(s.ws.reason().reason.data(), s.ws.reason().reason.size())}};
    if (ec) return make_error(error_kind::io, "receive: " + ec.message());
    const auto data = s.buffer.cdata();
    if (s.ws.got_text()) {
        auto event = parse_server_event(beast::buffers_to_string(data));
        if (auto* e = std::get_if<protocol_error>(&event))
            return make_error(error_kind::invalid_input, "undecodable event: " + e->message);
        return received{std::get<server_event>(std::move(event))};
    }
    const std::span bytes(static_cast<const std::uint8_t*>(data.data()), data.size());
    auto header = decode_audio_header(bytes);
    if (!header) return header.err();
    return received{received_audio{*header, {bytes.begin() + audio_header_bytes, bytes.end()}}};
}

result<void> tts_client::close(std::chrono::milliseconds timeout) {
    const auto ec = state_->run(timeout, [&](auto handler) {
        state_->ws.async_close(websocket::close_code::normal, handler);
    });
    if (ec) return make_error(error_kind::io, "close: " + ec.message());
    return {};
}

}  // namespace megatts::e2e

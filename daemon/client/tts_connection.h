// tts_connection: one asynchronous client connection to WS /v1/tts (daemon/PROTOCOL.md) on the
// caller's executor, so that one io_context drives many connections (`megatts bench load`) or
// one (tts_client, the blocking client of the tests and tools).
//
// Contract: async_connect opens TCP to options.host (an IP address, not a name) and completes
// the WebSocket handshake, offering options.subprotocol; the handshake's HTTP status stays
// readable (handshake_status: 101, or 503 while the server drains, 400, ...). async_send writes
// one text or binary message; async_receive reads the next message and decodes it
// (received.h), the server's close frame becoming received_close; async_close sends a normal
// close and waits for the server's. abort() drops the socket without a closing handshake (a
// client that vanishes): pending operations then complete with errors. Beast's rule holds: at
// most one send (or close) and one receive pending at a time. Timeouts are the caller's
// (a timer and abort()). Handlers get result values, never exceptions.
// Thread: the executor's (one thread, or a strand). Lifetime: the caller keeps the connection
// alive until its pending handlers have run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include "daemon/client/received.h"
#include "kernels/common/result.h"

namespace megatts::client {

struct client_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    std::string path = "/v1/tts";
    // Offer the subprotocol megatts.v1 (empty: offer none, so `start` must name the protocol).
    std::string subprotocol = "megatts.v1";
    // SO_RCVBUF of the client's socket (0: the OS default); small values make a slow reader's
    // backlog reach the server's queue quickly.
    int receive_buffer_bytes = 0;
    std::chrono::milliseconds timeout{10000};  // connect and handshake (tts_client)
};

class tts_connection {
public:
    using done_handler = std::function<void(result<void>)>;
    using receive_handler = std::function<void(result<received>)>;

    explicit tts_connection(boost::asio::any_io_executor executor);

    void async_connect(const client_options& options, done_handler handler);
    void async_send(std::string payload, bool binary, done_handler handler);
    void async_receive(receive_handler handler);
    void async_close(done_handler handler);
    void abort();

    int handshake_status() const { return handshake_status_; }

private:
    boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
    boost::beast::flat_buffer read_buffer_;
    std::string write_payload_;  // the message being written; Beast does not copy it
    std::string host_header_;
    std::string path_;
    boost::beast::websocket::response_type handshake_response_;
    int handshake_status_ = 0;
};

}  // namespace megatts::client

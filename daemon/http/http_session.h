// http_session: one HTTP/1.1 connection: reads requests one at a time (keep-alive), answers
// them through http_routes, and hands the connection over to a websocket_session (upgrade to
// /v1/tts) or a speech_session (POST /v1/audio/speech), which hands it back when done.
//
// Contract: a request that is malformed (400) or over a size limit (413: a request line and
// headers beyond Beast's 8 KiB default, a body beyond limits.max_message_bytes) is answered and
// the connection closed; a connection idle between requests for limits.keepalive_timeout_s is
// closed. What a request becomes is request_dispatch's decision (refused upgrades included).
// Thread: everything runs on the
// connection's strand, the stream's executor. Lifetime: shared by its pending operation.
#pragma once

#include <memory>
#include <optional>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message_generator.hpp>
#include <boost/beast/http/parser.hpp>

#include "daemon/http/http_types.h"
#include "daemon/server/asio_strand.h"
#include "daemon/server/server_context.h"

namespace megatts {

class http_session : public std::enable_shared_from_this<http_session> {
public:
    // `buffer` holds bytes already read from the connection (after a speech response).
    http_session(boost::beast::tcp_stream&& stream, io_strand strand, server_context& server,
                 boost::beast::flat_buffer buffer = {});

    void run();

private:
    void do_read();
    void on_read(boost::beast::error_code ec, std::size_t bytes);
    void send(http::message_generator message);
    void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
    void close();

    boost::beast::tcp_stream stream_;
    io_strand strand_;
    server_context& server_;
    boost::beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
};

}  // namespace megatts

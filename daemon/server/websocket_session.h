// websocket_session: one connection of WS /v1/tts, the native streaming protocol (PROTOCOL.md).
//
// Paths. The read path parses each client message (protocol codec) and calls the connection's
// tts_session; it keeps reading whatever the write path does, so a cancel is honoured while the
// send queue is full. The write path takes messages from the send_queue and has exactly one
// async_write outstanding (Beast's rule). The session's events (started, audio, metrics, done,
// stall, error) arrive through a session_event_relay and become queued messages.
//
// Policy. Bad input is answered with an error event and harms nothing else; limits.max_errors
// of them close the connection (1008). Audio queued past send_queue.hard_ms, events past
// send_queue.max_events, or a stall longer than send_queue.stall_timeout_ms close it with
// 1008 (slow_consumer); the soft limit and the stall event are the pipeline's. A fatal error
// drops queued audio, frees the model slot at once (tts_session::close), sends the error event
// and then the close frame; a peer that never reads again is dropped by the keep-alive timeout.
// A connection idle for limits.idle_timeout_s (no message, nothing in progress) closes with
// 1000. go_away() (drain) closes with 1001 once the utterances in progress are done;
// close_now() at once.
//
// Thread: every handler, timer and session event runs on the connection's strand (the socket's
// executor, also handed to the tts_session), so the state below needs no lock. Lifetime: shared
// by the pending operations; the session_registry and the relay hold it weakly. Blocking: never.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include "daemon/http/http_types.h"
#include "daemon/protocol/client_message.h"
#include "daemon/protocol/error_code.h"
#include "daemon/protocol/server_event.h"
#include "daemon/server/asio_strand.h"
#include "daemon/server/send_queue.h"
#include "daemon/server/server_context.h"
#include "daemon/server/session_registry.h"
#include "pipeline/session/tts_session.h"

namespace megatts {

class websocket_session final : public drainable, public std::enable_shared_from_this<websocket_session> {
public:
    // `stream` carries the connection whose upgrade request `run` gets; its executor is `strand`.
    websocket_session(boost::beast::tcp_stream&& stream, io_strand strand, server_context& server,
                      bool subprotocol_negotiated);
    ~websocket_session() override;

    void run(http_request upgrade);

    void go_away() override;
    void close_now() override;

    // session_events, through session_event_relay, on the strand.
    void on_started(const utterance_started& started);
    void on_audio(const audio_chunk& chunk);
    void on_metrics(const utterance_metrics& metrics);
    void on_done(const utterance_done& done);
    void on_stall(const stall_notice& notice);
    void on_error(std::uint32_t context, const session_error& error);

private:
    // What the connection remembers of an utterance between its `started` and its `done`.
    struct utterance_state {
        std::uint32_t context = 0;
        audio_format format = audio_format::opus;
        int sample_rate = 0;  // of the session's sample positions (opus: 24000)
        int opus_frame_ms = 0;
        std::uint32_t sequence = 0;        // of the next audio message
        std::uint32_t taken = 0;           // audio messages handed to the socket
        std::uint32_t end_timestamp = 0;   // wire timestamp just past the last audio message
        bool trace = false;
        std::optional<std::string> trace_json;
    };

    void on_accept(boost::beast::error_code ec);
    void open_session();
    void do_read();
    void on_read(boost::beast::error_code ec, std::size_t bytes);
    void handle_message();
    void handle(const start_message& m);
    void handle(const text_message& m);
    void handle(const flush_message& m);
    void handle(const end_message& m);
    void handle(const cancel_message& m);
    void handle(const client_metrics_message& m);
    void check(const session_status& status);

    void queue_event(const server_event& event, std::uint32_t context = 0);
    void report(error_code code, std::string message, std::uint32_t context = 0);
    void fail(error_code code, std::string message);
    void close_after_flush(std::uint16_t code, std::string reason);
    void do_write();
    void on_write(boost::beast::error_code ec, std::size_t bytes);
    void start_close();
    void finish();
    void drop_queued_audio();
    void close_if_drained();
    bool busy() const;
    utterance_state* find(std::uint32_t context);

    void arm_idle_timer();
    void on_idle_timer(boost::beast::error_code ec);
    void on_stall_timer(boost::beast::error_code ec);

    boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
    io_strand strand_;
    server_context& server_;
    const bool subprotocol_negotiated_;
    boost::beast::flat_buffer read_buffer_;
    send_queue queue_;
    std::optional<outgoing_message> in_flight_;
    std::shared_ptr<tts_session> session_;
    std::uint64_t session_id_ = 0;  // for the log; kept after session_ is released
    std::optional<std::uint64_t> registry_id_;

    std::deque<utterance_state> utterances_;  // started, not done; bounded by the session's queue
    std::deque<bool> pending_traces_;         // trace flags of accepted starts not yet started
    bool last_trace_ = false;                 // options reused by text after a flush
    int errors_ = 0;

    boost::asio::steady_timer idle_timer_;
    boost::asio::steady_timer stall_timer_;
    std::chrono::steady_clock::time_point last_activity_;
    bool stalled_ = false;

    bool accepted_ = false;
    bool draining_ = false;
    bool close_started_ = false;
    bool finished_ = false;
    std::optional<boost::beast::websocket::close_reason> close_after_flush_;
};

}  // namespace megatts

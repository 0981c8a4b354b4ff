// speech_session: one POST /v1/audio/speech request (PROTOCOL.md §7), from its parsed body to
// the last byte of audio, on a tts_session of its own.
//
// Streaming (stream: true): the status line and headers (Transfer-Encoding: chunked) leave
// with the first audio chunk, and every chunk's bytes leave as one HTTP chunk as soon as the
// session produces them; one write is outstanding at a time, and each chunk's receipt goes
// back to the session when its write completes, so the pipeline's soft limit throttles
// generation to what the client reads. Opus is wrapped as Ogg Opus with a page per packet
// (no page buffering: the first packet leaves at once), WAV as a header of unknown length
// followed by PCM16.
// Whole (stream: false): the body is collected (receipts returned as it grows) and sent with
// Content-Length once the session is done; its size is bounded by the utterance, whose text
// is bounded by limits.max_text_bytes and whose frames by the runaway guard.
// Errors before the first byte are HTTP errors with the OpenAI body (400, 404 unknown voice,
// 503 busy or not ready, 500); after it, the connection is closed without the final chunk,
// so the client sees a truncated transfer. When the response is complete and keep-alive was
// asked for, the connection goes back to a new http_session.
//
// Thread: everything runs on the connection's strand (also the tts_session's). Lifetime:
// shared by pending operations; the relay holds it weakly, so while only the pipeline works for
// it (no operation pending), it holds itself, until the response is complete or abandoned.
// Blocking: never.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>

#include "daemon/http/http_types.h"
#include "daemon/http/ogg_opus_stream.h"
#include "daemon/http/speech_request.h"
#include "daemon/server/asio_strand.h"
#include "daemon/server/server_context.h"
#include "daemon/server/session_registry.h"
#include "pipeline/session/tts_session.h"

namespace megatts {

class speech_session final : public drainable, public std::enable_shared_from_this<speech_session> {
public:
    speech_session(boost::beast::tcp_stream&& stream, io_strand strand, server_context& server,
                   boost::beast::flat_buffer buffer);
    ~speech_session() override;

    void run(http_request request);

    // A drain lets a response finish by itself; past the budget it is cut off.
    void go_away() override {}
    void close_now() override;

    // session_events, through session_event_relay, on the strand.
    void on_started(const utterance_started& started);
    void on_audio(const audio_chunk& chunk);
    void on_metrics(const utterance_metrics& metrics);
    void on_done(const utterance_done& done);
    void on_stall(const stall_notice&) {}
    void on_error(std::uint32_t context, const session_error& error);

private:
    // Bytes waiting for the socket, with the receipt of the chunk they carry, if any.
    struct pending_write {
        std::vector<std::uint8_t> bytes;
        std::optional<audio_receipt> receipt;
        bool last_chunk = false;  // the terminating zero-length chunk of a chunked body
    };

    void start(const speech_request& request);
    void respond_error(http::status status, error_code code, std::string message, std::string param = {});
    void send_whole_response(std::string content_type, std::vector<std::uint8_t> body);
    http::response<http::empty_body> response_head() const;
    void queue_bytes(std::vector<std::uint8_t> bytes, std::optional<audio_receipt> receipt);
    // A streamed WAV starts with a header of unknown length, once; false if it cannot be made.
    bool queue_wav_stream_header();
    void do_write();
    void on_write(boost::beast::error_code ec, std::size_t bytes);
    void complete(bool keep_alive);
    void abort();
    void release_session();

    boost::beast::tcp_stream stream_;
    io_strand strand_;
    server_context& server_;
    boost::beast::flat_buffer buffer_;
    http_request request_;
    speech_format format_ = speech_format::opus;
    bool streaming_ = false;
    int sample_rate_ = 0;
    std::shared_ptr<tts_session> session_;
    std::shared_ptr<speech_session> self_;  // set while the session works for the response
    std::optional<std::uint64_t> registry_id_;

    std::optional<ttfa_marks> marks_;  // for the trace file (server.trace_dir)
    std::optional<ogg_opus_stream> ogg_;
    std::vector<std::uint8_t> body_;  // whole responses: the audio so far

    http::response<http::empty_body> head_;
    std::optional<http::response_serializer<http::empty_body>> head_serializer_;
    bool head_sent_ = false;
    bool wav_header_queued_ = false;
    std::deque<pending_write> writes_;  // bounded by the session's soft limit (receipts out)
    std::optional<pending_write> in_flight_;
    bool writing_head_ = false;
    bool finished_ = false;
};

}  // namespace megatts

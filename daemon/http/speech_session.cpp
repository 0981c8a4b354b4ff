#include "daemon/http/speech_session.h"

#include <chrono>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/vector_body.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/error_response.h"
#include "daemon/http/http_session.h"
#include "daemon/protocol/session_error_code.h"
#include "daemon/server/session_event_relay.h"
#include "pipeline/audio/sample_rates.h"
#include "pipeline/audio/wav_writer.h"

namespace megatts {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

// Ogg pages of a streamed response close after every packet, so nothing waits for a page to
// fill; a whole response groups a vocoder frame's packets per page, as files do.
constexpr int streamed_page_ms = 0;
constexpr int whole_page_ms = 80;

const char* content_type(speech_format format) {
    switch (format) {
    case speech_format::opus: return "audio/ogg";
    case speech_format::wav: return "audio/wav";
    case speech_format::pcm: return "audio/pcm";
    }
    return "application/octet-stream";
}

http::status status_of(error_code code) {
    switch (code) {
    case error_code::unknown_voice: return http::status::not_found;
    case error_code::server_busy:
    case error_code::not_ready: return http::status::service_unavailable;
    case error_code::synthesis_failed:
    case error_code::internal: return http::status::internal_server_error;
    default: return http::status::bad_request;
    }
}

const char* param_of(error_code code) {
    switch (code) {
    case error_code::unknown_voice: return "voice";
    case error_code::unknown_language: return "language";
    case error_code::text_too_long:
    case error_code::invalid_utf8: return "input";
    default: return "";
    }
}

bool is_json(std::string_view type) { return type.empty() || type.starts_with("application/json"); }

}  // namespace

speech_session::speech_session(beast::tcp_stream&& stream, io_strand strand, server_context& server,
                               beast::flat_buffer buffer)
    : stream_(std::move(stream)), strand_(std::move(strand)), server_(server), buffer_(std::move(buffer)) {}

speech_session::~speech_session() { release_session(); }

void speech_session::run(http_request request) {
    request_ = std::move(request);
    if (!is_json(request_[http::field::content_type])) {
        respond_error(http::status::unsupported_media_type, error_code::bad_request,
                      "the body must be application/json");
        return;
    }
    auto parsed = parse_speech_request(request_.body(), static_cast<std::size_t>(server_.config().limits.max_text_bytes));
    if (auto* e = std::get_if<speech_request_error>(&parsed)) {
        respond_error(status_of(e->error.code), e->error.code, e->error.message, e->param);
        return;
    }
    start(std::get<speech_request>(parsed));
}

void speech_session::start(const speech_request& request) {
    auto* service = server_.service_if_accepting();
    if (!service) {
        respond_error(http::status::service_unavailable, error_code::not_ready,
                      "the server is " + std::string(server_phase_name(server_.phase())));
        return;
    }
    auto opened = service->open_session(std::make_shared<asio_strand>(strand_),
                                        std::make_shared<session_event_relay<speech_session>>(weak_from_this()));
    if (!opened) {
        const auto code = protocol_error_code(opened.err().code);
        respond_error(status_of(code), code, opened.err().message);
        return;
    }
    session_ = std::move(*opened);
    self_ = shared_from_this();
    registry_id_ = server_.sessions().add(weak_from_this());
    format_ = request.format;
    streaming_ = request.stream;
    sample_rate_ = request.format == speech_format::opus ? vocoder_sample_rate : request.sample_rate;

    utterance_options options;
    options.voice = request.voice.value_or(server_.default_voice());
    options.language = request.language;
    options.sampling = {.greedy = request.sampling.greedy,
                        .seed = request.sampling.seed.value_or(0),
                        .temperature = request.sampling.temperature,
                        .top_k = request.sampling.top_k,
                        .top_p = request.sampling.top_p};
    options.format = request.format == speech_format::opus ? audio_format::opus : audio_format::pcm16;
    options.sample_rate = sample_rate_;
    options.opus_frame_ms = server_.config().opus.frame_ms;
    // An HTTP client reads at its own pace (the send queue's backpressure bounds it): generation
    // is not held to a listener's real time.
    options.paced = false;
    auto status = session_->start(options);
    if (status) status = session_->text(request.input, text_end::end);  // whole text: the `say` layout
    if (!status) {
        const auto code = protocol_error_code(status.err().code);
        respond_error(status_of(code), code, status.err().message, param_of(code));
    }
}

void speech_session::on_started(const utterance_started& started) {
    if (format_ != speech_format::opus) return;
    const int frame_samples = started.opus_frame_ms * vocoder_sample_rate / 1000;
    auto ogg = ogg_opus_stream::create(started.opus_pre_skip, frame_samples,
                                       streaming_ ? streamed_page_ms : whole_page_ms);
    if (!ogg) {
        on_error(started.context, {session_errc::internal, ogg.err().message});
        return;
    }
    ogg_.emplace(std::move(*ogg));
}

void speech_session::on_audio(const audio_chunk& chunk) {
    if (finished_) return;
    std::vector<std::uint8_t> bytes;
    if (format_ == speech_format::opus) {
        auto pages = ogg_->push(chunk.bytes, chunk.first_sample, chunk.samples);
        if (!pages) {
            session_->audio_sent(chunk.receipt, false);
            on_error(chunk.receipt.context, {session_errc::internal, pages.err().message});
            return;
        }
        bytes = std::move(*pages);
    } else {
        bytes.assign(chunk.bytes.begin(), chunk.bytes.end());
    }
    if (!streaming_) {
        body_.insert(body_.end(), bytes.begin(), bytes.end());
        session_->audio_sent(chunk.receipt, true);
        return;
    }
    if (!queue_wav_stream_header()) {
        session_->audio_sent(chunk.receipt, false);
        return;
    }
    queue_bytes(std::move(bytes), chunk.receipt);
    do_write();
}

void speech_session::on_done(const utterance_done&) {
    if (finished_) return;
    if (format_ == speech_format::opus && !(ogg_ && ogg_->finished())) {
        on_error(0, {session_errc::internal, "the Opus stream ended without its last packet"});
        return;
    }
    if (!streaming_) {
        if (format_ == speech_format::wav) {
            auto header = wav_header(sample_rate_, wav_sample_format::pcm16, body_.size() / 2);
            if (!header) {
                on_error(0, {session_errc::internal, header.err().message});
                return;
            }
            body_.insert(body_.begin(), header->begin(), header->end());
        }
        send_whole_response(content_type(format_), std::move(body_));
        return;
    }
    if (!queue_wav_stream_header()) return;
    writes_.push_back({.last_chunk = true});
    do_write();
}

void speech_session::on_error(std::uint32_t, const session_error& error) {
    if (finished_) return;
    const auto code = protocol_error_code(error.code);
    server_.metrics().protocol_error(code);
    // The message may quote the request (a voice name, say): only the code above debug level.
    const auto id = session_ ? session_->id() : 0;
    spdlog::warn("session {} (speech) failed: {}", id, error_code_name(code));
    spdlog::debug("session {} (speech) failed: {}: {}", id, error_code_name(code), error.message);
    if (head_sent_ || writing_head_ || in_flight_) {
        abort();
        return;
    }
    respond_error(status_of(code), code, error.message, param_of(code));
}

bool speech_session::queue_wav_stream_header() {
    if (format_ != speech_format::wav || wav_header_queued_) return true;
    wav_header_queued_ = true;
    auto header = wav_header(sample_rate_, wav_sample_format::pcm16, std::nullopt);
    if (!header) {
        on_error(0, {session_errc::internal, header.err().message});
        return false;
    }
    queue_bytes(std::move(*header), std::nullopt);
    return true;
}

void speech_session::respond_error(http::status status, error_code code, std::string message, std::string param) {
    release_session();
    finished_ = true;
    server_.metrics().protocol_error(code);
    auto response = error_response(request_, status, code, message, param);
    const bool keep_alive = response.keep_alive();
    auto shared = std::make_shared<http_response>(std::move(response));
    http::async_write(stream_, *shared,
                      [self = shared_from_this(), shared, keep_alive](beast::error_code ec, std::size_t) {
                          if (ec) return;
                          self->complete(keep_alive);
                      });
}

http::response<http::empty_body> speech_session::response_head() const {
    http::response<http::empty_body> head{http::status::ok, request_.version()};
    head.set(http::field::content_type, content_type(format_));
    head.set(http::field::cache_control, "no-store");
    head.set("X-Megatts-Synthetic", server_.model().synthetic ? "true" : "false");
    if (format_ != speech_format::opus) head.set("X-Megatts-Sample-Rate", std::to_string(sample_rate_));
    head.keep_alive(request_.keep_alive());
    return head;
}

void speech_session::send_whole_response(std::string type, std::vector<std::uint8_t> body) {
    finished_ = true;
    auto head = response_head();
    auto response = std::make_shared<http::response<http::vector_body<std::uint8_t>>>(http::status::ok,
                                                                                      request_.version());
    response->base() = head.base();
    response->set(http::field::content_type, type);
    response->body() = std::move(body);
    response->prepare_payload();
    const bool keep_alive = response->keep_alive();
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response, keep_alive](beast::error_code ec, std::size_t) {
                          if (ec) return;
                          self->complete(keep_alive);
                      });
}

void speech_session::queue_bytes(std::vector<std::uint8_t> bytes, std::optional<audio_receipt> receipt) {
    if (bytes.empty() && receipt) {
        session_->audio_sent(*receipt, true);  // a packet that completed no page yet
        return;
    }
    writes_.push_back({.bytes = std::move(bytes), .receipt = receipt});
}

void speech_session::do_write() {
    if (writing_head_ || in_flight_ || finished_ || writes_.empty()) return;
    stream_.expires_after(std::chrono::seconds(server_.config().limits.keepalive_timeout_s));
    if (!head_sent_) {
        writing_head_ = true;
        head_ = response_head();
        head_.chunked(true);
        head_serializer_.emplace(head_);
        http::async_write_header(stream_, *head_serializer_,
                                 [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                     self->writing_head_ = false;
                                     if (ec) {
                                         self->abort();
                                         return;
                                     }
                                     self->head_sent_ = true;
                                     self->do_write();
                                 });
        return;
    }
    in_flight_ = std::move(writes_.front());
    writes_.pop_front();
    auto handler = beast::bind_front_handler(&speech_session::on_write, shared_from_this());
    if (in_flight_->last_chunk)
        net::async_write(stream_, http::make_chunk_last(), std::move(handler));
    else
        net::async_write(stream_, http::make_chunk(net::buffer(in_flight_->bytes)), std::move(handler));
}

void speech_session::on_write(beast::error_code ec, std::size_t) {
    auto written = std::move(*in_flight_);
    in_flight_.reset();
    if (written.receipt && session_) session_->audio_sent(*written.receipt, !ec);
    if (ec) {
        spdlog::debug("speech response write failed: {}", ec.message());
        abort();
        return;
    }
    if (written.last_chunk) {
        complete(request_.keep_alive());
        return;
    }
    do_write();
}

void speech_session::complete(bool keep_alive) {
    finished_ = true;
    release_session();
    stream_.expires_never();
    if (keep_alive) {
        std::make_shared<http_session>(std::move(stream_), strand_, server_, std::move(buffer_))->run();
        return;
    }
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
}

void speech_session::abort() {
    finished_ = true;
    release_session();  // the receipts of what is still queued no longer matter
    writes_.clear();
    beast::error_code ignored;
    stream_.socket().close(ignored);
}

void speech_session::close_now() {
    net::dispatch(strand_, [self = shared_from_this()] {
        if (!self->finished_) self->abort();
    });
}

void speech_session::release_session() {
    if (session_) {
        session_->close();
        session_.reset();
    }
    if (registry_id_) {
        server_.sessions().remove(*registry_id_);
        registry_id_.reset();
    }
    self_.reset();  // the pending operation that follows, if any, keeps this alive from here
}

}  // namespace megatts

#include "daemon/server/websocket_session.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket/error.hpp>
#include <spdlog/spdlog.h>

#include "daemon/protocol/audio_header.h"
#include "daemon/protocol/protocol_version.h"
#include "daemon/protocol/session_error_code.h"
#include "daemon/protocol/utterance_trace.h"
#include "daemon/protocol/wire_events.h"
#include "daemon/server/session_event_relay.h"
#include "pipeline/audio/sample_rates.h"

namespace megatts {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

using std::chrono::milliseconds;
using std::chrono::seconds;

// How long the opening and closing handshakes may take before the socket is dropped.
constexpr seconds handshake_timeout{10};

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

text_end text_end_of(bool flush, bool end) {
    return end ? text_end::end : flush ? text_end::flush : text_end::more;
}

utterance_options options_of(const start_message& m, const server_context& server) {
    utterance_options o;
    o.voice = lower(m.voice.value_or(server.default_voice()));
    o.language = lower(m.language.value_or("auto"));
    o.sampling = {.greedy = m.sampling.greedy,
                  .seed = m.sampling.seed.value_or(0),
                  .temperature = m.sampling.temperature,
                  .top_k = m.sampling.top_k,
                  .top_p = m.sampling.top_p};
    o.format = m.format;
    // Opus is coded from the model's 24 kHz; the wire's 48000 is only the Opus clock.
    o.sample_rate = m.format == audio_format::opus ? vocoder_sample_rate : m.sample_rate.value_or(vocoder_sample_rate);
    o.opus_frame_ms = m.opus_frame_ms.value_or(server.config().opus.frame_ms);
    o.max_frames = m.max_frames.value_or(0);
    o.trace = m.trace || server.traces() != nullptr;
    return o;
}

}  // namespace

websocket_session::websocket_session(beast::tcp_stream&& stream, io_strand strand, server_context& server,
                                     bool subprotocol_negotiated)
    : ws_(std::move(stream)),
      strand_(std::move(strand)),
      server_(server),
      subprotocol_negotiated_(subprotocol_negotiated),
      queue_(std::int64_t{server.config().send_queue.hard_ms} * 1000,
             static_cast<std::size_t>(server.config().send_queue.max_events)),
      idle_timer_(strand_),
      stall_timer_(strand_) {}

websocket_session::~websocket_session() {
    if (session_) session_->close();
    if (registry_id_) server_.sessions().remove(*registry_id_);
    if (accepted_) server_.metrics().connection_closed();
}

void websocket_session::run(http_request upgrade) {
    const auto& config = server_.config();
    auto& socket = beast::get_lowest_layer(ws_).socket();
    if (config.send_queue.socket_buffer_bytes > 0) {
        beast::error_code ignored;  // a refused size leaves the OS default, which only hides audio from the queue
        socket.set_option(net::socket_base::send_buffer_size(config.send_queue.socket_buffer_bytes), ignored);
    }
    beast::get_lowest_layer(ws_).expires_never();  // the WebSocket layer has its own timeouts
    ws_.set_option(websocket::stream_base::timeout{
        .handshake_timeout = handshake_timeout,
        .idle_timeout = seconds(config.limits.keepalive_timeout_s),
        .keep_alive_pings = true,
    });
    const bool echo_subprotocol = subprotocol_negotiated_;
    ws_.set_option(websocket::stream_base::decorator([echo_subprotocol](websocket::response_type& response) {
        response.set(http::field::server, "megatts " MEGATTS_VERSION);
        if (echo_subprotocol) response.set(http::field::sec_websocket_protocol, protocol_version);
    }));
    ws_.read_message_max(static_cast<std::uint64_t>(config.limits.max_message_bytes));
    ws_.auto_fragment(false);
    ws_.async_accept(upgrade, beast::bind_front_handler(&websocket_session::on_accept, shared_from_this()));
}

void websocket_session::on_accept(beast::error_code ec) {
    if (ec) {
        spdlog::debug("websocket handshake failed: {}", ec.message());
        return;
    }
    accepted_ = true;
    server_.metrics().connection_opened();
    last_activity_ = std::chrono::steady_clock::now();
    open_session();
    do_read();
    arm_idle_timer();
}

void websocket_session::open_session() {
    auto* service = server_.service_if_accepting();
    if (!service) {
        close_after_flush(close_code::going_away, "draining");
        do_write();
        return;
    }
    auto opened = service->open_session(std::make_shared<asio_strand>(strand_),
                                        std::make_shared<session_event_relay<websocket_session>>(weak_from_this()));
    if (!opened) {
        fail(protocol_error_code(opened.err().code), opened.err().message);
        return;
    }
    session_ = std::move(*opened);
    session_id_ = session_->id();
    registry_id_ = server_.sessions().add(weak_from_this());
    queue_event(server_.make_ready_event());
    do_write();
    spdlog::info("session {} opened (websocket)", session_id_);
}

void websocket_session::do_read() {
    ws_.async_read(read_buffer_, beast::bind_front_handler(&websocket_session::on_read, shared_from_this()));
}

void websocket_session::on_read(beast::error_code ec, std::size_t) {
    if (ec) {
        // Beast has already answered protocol violations with their close code.
        if (ec == websocket::error::message_too_big) server_.metrics().server_close(close_code::message_too_big);
        if (ec == websocket::error::bad_frame_payload) server_.metrics().server_close(close_code::invalid_payload);
        if (ec != websocket::error::closed) spdlog::debug("websocket read ended: {}", ec.message());
        finish();
        return;
    }
    last_activity_ = std::chrono::steady_clock::now();
    if (!close_started_ && !close_after_flush_) handle_message();
    read_buffer_.consume(read_buffer_.size());
    do_read();
}

void websocket_session::handle_message() {
    if (!ws_.got_text()) {
        report(error_code::bad_message, "binary messages are not accepted; send JSON in text messages");
        return;
    }
    auto parsed = parse_client_message(beast::buffers_to_string(read_buffer_.data()));
    if (auto* e = std::get_if<protocol_error>(&parsed)) {
        report(e->code, std::move(e->message));
        return;
    }
    if (!session_) return;  // refused at admission; the close is on its way
    std::visit([this](const auto& m) { handle(m); }, std::get<client_message>(parsed));
}

void websocket_session::handle(const start_message& m) {
    const bool named = m.protocol.has_value() || subprotocol_negotiated_;
    if (!named || (m.protocol && *m.protocol != protocol_version)) {
        fail(error_code::protocol_mismatch, "this server speaks " + std::string(protocol_version) +
                                                "; name it in start.protocol or as the WebSocket subprotocol");
        return;
    }
    if (const auto started = session_->start(options_of(m, server_)); !started) {
        check(started);
        return;
    }
    pending_traces_.push_back(m.trace);
    if (m.text)
        check(session_->text(*m.text, text_end_of(m.flush, m.end)));
    else if (m.end)
        check(session_->end());
    else if (m.flush)
        check(session_->flush());
}

void websocket_session::handle(const text_message& m) { check(session_->text(m.text, text_end_of(m.flush, m.end))); }

void websocket_session::handle(const flush_message&) { check(session_->flush()); }

void websocket_session::handle(const end_message&) { check(session_->end()); }

void websocket_session::handle(const cancel_message&) {
    session_->cancel();
    drop_queued_audio();
    pending_traces_.clear();
    for (auto& u : utterances_) {
        queue_event(done_event{.context = u.context, .reason = done_reason::cancelled, .messages = u.taken},
                    u.context);
    }
    utterances_.clear();
    close_if_drained();
    do_write();
}

void websocket_session::handle(const client_metrics_message& m) {
    const auto underruns = std::min<std::int64_t>(m.underruns.value_or(0), std::numeric_limits<int>::max());
    session_->client_report({.underruns = static_cast<int>(underruns),
                             .first_played_ms = m.first_played_ms.value_or(-1.0)});
}

void websocket_session::check(const session_status& status) {
    if (!status) report(protocol_error_code(status.err().code), status.err().message);
}

void websocket_session::on_started(const utterance_started& started) {
    utterance_state u{.context = started.context,
                      .format = started.format,
                      .sample_rate = started.sample_rate,
                      .opus_frame_ms = started.opus_frame_ms};
    if (!pending_traces_.empty()) {
        last_trace_ = pending_traces_.front();
        pending_traces_.pop_front();
    }
    u.trace = last_trace_;
    utterances_.push_back(u);
    queue_event(to_started_event(started), started.context);
    do_write();
}

void websocket_session::on_audio(const audio_chunk& chunk) {
    auto* u = find(chunk.receipt.context);
    if (!u || close_after_flush_) {
        if (session_) session_->audio_sent(chunk.receipt, false);
        return;
    }
    const std::uint32_t timestamp = wire_timestamp(u->format, u->sample_rate, chunk.first_sample);
    const audio_header header{
        .kind = u->format == audio_format::opus ? audio_kind::opus : audio_kind::pcm16,
        .flags = u->sequence == 0 ? audio_flag::first : std::uint16_t{0},
        .context = u->context,
        .sequence = u->sequence,
        .timestamp = timestamp,
    };
    const std::int64_t duration_samples = u->format == audio_format::opus
                                              ? std::int64_t{u->opus_frame_ms} * u->sample_rate / 1000
                                              : static_cast<std::int64_t>(chunk.bytes.size() / 2);
    u->end_timestamp = wire_timestamp(u->format, u->sample_rate, chunk.first_sample + duration_samples);
    ++u->sequence;
    const bool within = queue_.push({.role = message_role::audio,
                                     .context = u->context,
                                     .bytes = encode_audio_message(header, chunk.bytes),
                                     .receipt = chunk.receipt});
    if (!within) {
        fail(error_code::slow_consumer, "more than " + std::to_string(server_.config().send_queue.hard_ms) +
                                            " ms of audio waiting for the socket");
        return;
    }
    do_write();
}

void websocket_session::on_metrics(const utterance_metrics& metrics) {
    if (auto* u = find(metrics.context)) u->marks = metrics.marks;
    queue_event(to_metrics_event(metrics), metrics.context);
    do_write();
}

void websocket_session::on_done(const utterance_done& done) {
    auto* u = find(done.context);
    if (!u) return;
    const audio_header last{
        .kind = u->format == audio_format::opus ? audio_kind::opus : audio_kind::pcm16,
        .flags = static_cast<std::uint16_t>(audio_flag::last | (u->sequence == 0 ? audio_flag::first : 0)),
        .context = u->context,
        .sequence = u->sequence,
        .timestamp = u->end_timestamp,
    };
    auto event = to_done_event(done, std::int64_t{u->sequence} + 1);
    auto* traces = server_.traces();
    if (u->trace || traces) {
        auto trace = utterance_trace_json({.session = session_id_,
                                           .context = u->context,
                                           .marks = u->marks.value_or(ttfa_marks{}),
                                           .steps = done.steps,
                                           .frames = done.frames});
        if (traces) traces->post(trace_file_name(session_id_, u->context), trace);
        if (u->trace) event.trace_json = std::move(trace);
    }
    const bool within = queue_.push_context_end(
        {.role = message_role::audio_end, .context = u->context, .bytes = encode_audio_message(last, {})},
        {.role = message_role::event, .context = u->context, .bytes = bytes_of(encode_server_event(event))});
    std::erase_if(utterances_, [&](const utterance_state& s) { return s.context == done.context; });
    if (!within) {
        fail(error_code::slow_consumer, "too many events waiting for the socket");
        return;
    }
    close_if_drained();
    do_write();
}

void websocket_session::on_stall(const stall_notice& notice) {
    queue_event(stall_event{.stalled = notice.stalled, .queued_ms = static_cast<int>(notice.queued_ms)});
    if (notice.stalled && !stalled_) {
        stall_timer_.expires_after(milliseconds(server_.config().send_queue.stall_timeout_ms));
        stall_timer_.async_wait(beast::bind_front_handler(&websocket_session::on_stall_timer, shared_from_this()));
    } else if (!notice.stalled) {
        stall_timer_.cancel();
    }
    stalled_ = notice.stalled;
    do_write();
}

void websocket_session::on_error(std::uint32_t context, const session_error& error) {
    report(protocol_error_code(error.code), error.message, context);
    if (auto* u = find(context)) {
        queue_event(done_event{.context = context, .reason = done_reason::error, .messages = u->taken}, context);
        std::erase_if(utterances_, [&](const utterance_state& s) { return s.context == context; });
        close_if_drained();
    }
    do_write();
}

void websocket_session::queue_event(const server_event& event, std::uint32_t context) {
    if (finished_) return;
    const bool within =
        queue_.push({.role = message_role::event, .context = context, .bytes = bytes_of(encode_server_event(event))});
    if (!within && !close_after_flush_) fail(error_code::slow_consumer, "too many events waiting for the socket");
}

void websocket_session::report(error_code code, std::string message, std::uint32_t context) {
    if (error_code_fatal(code)) {
        fail(code, std::move(message));
        return;
    }
    if (close_after_flush_) return;
    server_.metrics().protocol_error(code);
    spdlog::debug("session {} error {}: {}", session_id_, error_code_name(code), message);
    queue_event(error_event{.code = code,
                            .message = std::move(message),
                            .context = context ? std::optional(context) : std::nullopt,
                            .fatal = false});
    if (++errors_ >= server_.config().limits.max_errors)
        fail(error_code::too_many_errors, std::to_string(errors_) + " errors on this connection");
    do_write();
}

void websocket_session::fail(error_code code, std::string message) {
    if (close_after_flush_ || finished_) return;
    // The message may quote the client (a voice name, say): only the code above debug level.
    spdlog::info("session {} closing: {}", session_id_, error_code_name(code));
    spdlog::debug("session {} closing: {}: {}", session_id_, error_code_name(code), message);
    server_.metrics().protocol_error(code);
    drop_queued_audio();
    if (session_) {
        session_->close();  // frees the model slot now, not when the peer gets round to reading
        session_.reset();
    }
    // Within the limits or not, this is the last message: the close frame follows it.
    [[maybe_unused]] const bool within = queue_.push(
        {.role = message_role::event,
         .bytes = bytes_of(encode_server_event(error_event{.code = code, .message = message, .fatal = true}))});
    const auto close = error_close_code(code).value_or(close_code::internal_error);
    close_after_flush(close, std::string(error_code_name(code)));
    do_write();
}

void websocket_session::close_after_flush(std::uint16_t code, std::string reason) {
    close_after_flush_ = websocket::close_reason(static_cast<websocket::close_code>(code), reason);
}

void websocket_session::drop_queued_audio() {
    for (const auto& receipt : queue_.drop_audio())
        if (session_) session_->audio_sent(receipt, false);
}

void websocket_session::do_write() {
    if (in_flight_ || close_started_ || finished_ || !accepted_) return;
    if (!queue_.next()) {
        if (close_after_flush_ && queue_.empty()) start_close();
        return;
    }
    in_flight_ = queue_.take();
    if (in_flight_->role == message_role::audio)
        if (auto* u = find(in_flight_->context)) ++u->taken;
    ws_.binary(in_flight_->binary());
    ws_.async_write(net::buffer(in_flight_->bytes),
                    beast::bind_front_handler(&websocket_session::on_write, shared_from_this()));
}

void websocket_session::on_write(beast::error_code ec, std::size_t) {
    auto written = std::move(*in_flight_);
    in_flight_.reset();
    if (written.receipt && session_) session_->audio_sent(*written.receipt, !ec);
    if (ec) {
        spdlog::debug("websocket write failed: {}", ec.message());
        finish();
        return;
    }
    do_write();
}

void websocket_session::start_close() {
    close_started_ = true;
    idle_timer_.cancel();
    stall_timer_.cancel();
    server_.metrics().server_close(close_after_flush_->code);
    ws_.async_close(*close_after_flush_, [self = shared_from_this()](beast::error_code ec) {
        // The read loop sees the peer's close frame (or the timeout) and finishes.
        if (ec) self->finish();
    });
}

void websocket_session::finish() {
    if (finished_) return;
    finished_ = true;
    if (session_id_ && close_started_)
        spdlog::info("session {} closed by the server ({})", session_id_,
                     static_cast<unsigned>(close_after_flush_->code));
    else if (session_id_)
        spdlog::info("session {} closed by the client or the network", session_id_);
    idle_timer_.cancel();
    stall_timer_.cancel();
    drop_queued_audio();
    if (session_) {
        session_->close();
        session_.reset();
    }
    if (registry_id_) {
        server_.sessions().remove(*registry_id_);
        registry_id_.reset();
    }
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
}

bool websocket_session::busy() const { return !utterances_.empty() || !pending_traces_.empty(); }

void websocket_session::close_if_drained() {
    if (draining_ && !busy() && !close_after_flush_) close_after_flush(close_code::going_away, "going away");
}

websocket_session::utterance_state* websocket_session::find(std::uint32_t context) {
    const auto it = std::find_if(utterances_.begin(), utterances_.end(),
                                 [context](const utterance_state& u) { return u.context == context; });
    return it == utterances_.end() ? nullptr : &*it;
}

void websocket_session::go_away() {
    net::dispatch(strand_, [self = shared_from_this()] {
        self->draining_ = true;
        self->close_if_drained();
        self->do_write();
    });
}

void websocket_session::close_now() {
    net::dispatch(strand_, [self = shared_from_this()] {
        if (self->close_after_flush_) return;
        self->drop_queued_audio();
        if (self->session_) {
            self->session_->close();
            self->session_.reset();
        }
        self->close_after_flush(close_code::going_away, "going away");
        self->do_write();
    });
}

void websocket_session::arm_idle_timer() {
    idle_timer_.expires_at(last_activity_ + seconds(server_.config().limits.idle_timeout_s));
    idle_timer_.async_wait(beast::bind_front_handler(&websocket_session::on_idle_timer, shared_from_this()));
}

void websocket_session::on_idle_timer(beast::error_code ec) {
    if (ec || close_after_flush_ || finished_) return;
    const auto idle_for = std::chrono::steady_clock::now() - last_activity_;
    if (idle_for >= seconds(server_.config().limits.idle_timeout_s) && !busy()) {
        close_after_flush(close_code::normal, "idle");
        do_write();
        return;
    }
    if (busy()) last_activity_ = std::chrono::steady_clock::now();  // speaking is activity
    arm_idle_timer();
}

void websocket_session::on_stall_timer(beast::error_code ec) {
    if (ec || !stalled_) return;
    fail(error_code::slow_consumer, "stalled for more than " +
                                        std::to_string(server_.config().send_queue.stall_timeout_ms) + " ms");
}

}  // namespace megatts

#include "daemon/bench/load_request.h"

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/steady_timer.hpp>

#include "daemon/client/utterance_assembler.h"
#include "daemon/protocol/client_message.h"

namespace megatts::bench {
namespace {

using clock = std::chrono::steady_clock;

double ms_between(clock::time_point from, clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

class load_request : public std::enable_shared_from_this<load_request> {
public:
    load_request(boost::asio::any_io_executor executor, request_spec spec, std::function<void(request_outcome)> done)
        : spec_(std::move(spec)), done_(std::move(done)), connection_(executor), deadline_(executor), hold_(executor) {
        outcome_.index = spec_.index;
        outcome_.planned_at_s = spec_.plan.at_s;
        outcome_.sentence = spec_.plan.sentence;
        outcome_.language = spec_.language;
        outcome_.seed = spec_.plan.seed;
    }

    void start() {
        began_ = clock::now();
        outcome_.started_at_s = std::chrono::duration<double>(began_ - spec_.run_start).count();
        deadline_.expires_after(spec_.timeout);
        deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->finished_) return;
            self->timed_out_ = true;
            self->connection_.abort();  // the pending operation completes with an error
        });
        connection_.async_connect(spec_.connection, [self = shared_from_this()](result<void> r) {
            if (!r) {
                const int status = self->connection_.handshake_status();
                self->fail(status > 0 && status != 101 ? "http_" + std::to_string(status) : "connect", r.err().message);
                return;
            }
            self->receive();
        });
    }

private:
    void receive() {
        connection_.async_receive([self = shared_from_this()](result<client::received> r) { self->on_message(std::move(r)); });
    }

    void on_message(result<client::received> r) {
        if (holding_) {
            // Playing the audio out. A close (a drain's 1001, an idle timeout) or a broken
            // connection now costs nothing: the utterance is complete.
            if (!r || std::holds_alternative<client::received_close>(*r)) {
                connection_.abort();
                finish();
            } else {
                receive();
            }
            return;
        }
        if (!r) {
            fail(r.err().kind == error_kind::invalid_input ? "protocol" : "io", r.err().message);
            return;
        }
        if (auto* event = std::get_if<server_event>(&*r)) {
            if (std::holds_alternative<ready_event>(*event) && !start_sent_) {
                outcome_.connect_ms = ms_between(began_, clock::now());
                send_start();
                return;
            }
            if (const auto* e = std::get_if<error_event>(event)) {
                // The first error names the failure. One before the start (server_busy) or one
                // refusing the start (no context yet) means nothing will follow; a fatal one
                // after it precedes the close.
                if (!error_code_) {
                    error_code_ = std::string(error_code_name(e->code));
                    error_message_ = e->message;
                }
                if (!start_sent_ || (!e->fatal && !outcome_.started)) {
                    fail(*error_code_, *error_message_);
                    return;
                }
            }
            if (std::holds_alternative<started_event>(*event)) outcome_.started = true;
        }
        if (const auto* close = std::get_if<client::received_close>(&*r)) {
            fail(error_code_ ? *error_code_ : "close_" + std::to_string(close->code),
                 error_message_ ? *error_message_ : close->reason);
            return;
        }
        if (!start_sent_) {  // anything but ready, an error or a close before ready
            fail("protocol", "the first message was not ready");
            return;
        }
        auto record = assembler_.add(std::move(*r));
        if (!record) {
            fail("protocol", record.err().message);
            return;
        }
        if (*record) {
            complete(**record);
            return;
        }
        receive();
    }

    void send_start() {
        start_message start;
        start.voice = spec_.voice.empty() ? std::nullopt : std::optional(spec_.voice);
        start.language = spec_.language;
        start.format = spec_.format;
        start.sampling.seed = spec_.plan.seed;
        start.sampling.greedy = spec_.greedy;
        if (spec_.max_frames > 0) start.max_frames = spec_.max_frames;
        start.text = spec_.text;
        start.end = true;
        start_sent_ = true;
        sent_at_ = clock::now();
        connection_.async_send(encode_client_message(start), false, [self = shared_from_this()](result<void> r) {
            if (!r) self->fail("io", r.err().message);
        });
        receive();
    }

    void complete(const client::utterance_record& record) {
        const auto& done = record.done.value();
        outcome_.done_at_s = std::chrono::duration<double>(clock::now() - spec_.run_start).count();
        outcome_.done_reason = std::string(done_reason_name(done.reason));
        outcome_.audio_ms = done.audio_ms;
        outcome_.frames = done.frames;
        outcome_.audio_messages = static_cast<std::int64_t>(record.audio.size());
        if (record.metrics) outcome_.server_ttfa_ms = record.metrics->server_ttfa_ms;
        if (!record.audio.empty()) outcome_.ttfa_ms = ms_between(sent_at_, record.first_audio_at);
        if (spec_.format == audio_format::pcm16) outcome_.pcm16_samples = static_cast<std::int64_t>(record.pcm16_bytes().size() / 2);

        playout_clock playout(spec_.playout);
        for (const auto& message : record.audio) {
            playout.arrive(message.arrived, std::chrono::microseconds(record.audio_us(message)));
            if (message.header.flags & audio_flag::last) playout.end(message.arrived);
        }
        outcome_.underruns = playout.underruns();
        outcome_.stalled_ms = std::chrono::duration<double, std::milli>(playout.stalled()).count();
        if (playout.first_played()) outcome_.first_played_ms = ms_between(sent_at_, *playout.first_played());
        if (playout.first_dry() && playout.first_played())
            outcome_.first_underrun_ms = ms_between(*playout.first_played(), *playout.first_dry());

        const bool spoken = done.reason == done_reason::end || done.reason == done_reason::max_frames;
        if (!spoken) {
            // The utterance's own error names the failure; else the connection's (a refusal
            // that closes the connection, server_busy when every engine slot is taken, comes
            // without a context); else the done reason.
            if (!record.errors.empty())
                fail(std::string(error_code_name(record.errors.front().code)), record.errors.front().message);
            else if (error_code_)
                fail(*error_code_, error_message_.value_or(""));
            else
                fail("done_" + outcome_.done_reason, "");
            return;
        }
        // A player keeps its connection while it plays; reading on answers the server's pings.
        holding_ = true;
        hold_.expires_at(playout.played_out().value_or(clock::now()));
        hold_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->finished_) return;
            self->connection_.async_close([self](result<void>) { self->finish(); });
        });
        receive();
    }

    void fail(std::string code, std::string message) {
        if (finished_) return;
        outcome_.error = timed_out_ ? "timeout" : std::move(code);
        outcome_.error_message = timed_out_ ? "no done within " + std::to_string(spec_.timeout.count()) + " ms"
                                            : std::move(message);
        connection_.abort();
        finish();
    }

    void finish() {
        if (finished_) return;
        finished_ = true;
        deadline_.cancel();
        hold_.cancel();
        outcome_.finished_at_s = std::chrono::duration<double>(clock::now() - spec_.run_start).count();
        done_(std::move(outcome_));
    }

    request_spec spec_;
    std::function<void(request_outcome)> done_;
    client::tts_connection connection_;
    boost::asio::steady_timer deadline_;
    boost::asio::steady_timer hold_;
    client::utterance_assembler assembler_;
    request_outcome outcome_;
    clock::time_point began_{};
    clock::time_point sent_at_{};
    std::optional<std::string> error_code_;
    std::optional<std::string> error_message_;
    bool start_sent_ = false;
    bool holding_ = false;  // the utterance is complete; its playback is being waited out
    bool timed_out_ = false;
    bool finished_ = false;
};

}  // namespace

void launch_request(boost::asio::any_io_executor executor, request_spec spec,
                    std::function<void(request_outcome)> done) {
    std::make_shared<load_request>(std::move(executor), std::move(spec), std::move(done))->start();
}

}  // namespace megatts::bench

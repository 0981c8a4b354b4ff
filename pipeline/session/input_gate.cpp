#include "pipeline/session/input_gate.h"

#include <string>

#include "pipeline/audio/sample_rates.h"

namespace megatts {
namespace {

session_error fail(session_errc code, std::string message) { return session_error{code, std::move(message)}; }

}  // namespace

input_gate::input_gate(const model_config& config, const session_limits& limits) : config_(config), limits_(limits) {}

std::optional<session_error> input_gate::check_options(const utterance_options& o) const {
    if (!config_.speakers.contains(o.voice))
        return fail(session_errc::unknown_voice, "unknown voice '" + o.voice + "'");
    if (o.language != "auto" && !config_.languages.contains(o.language))
        return fail(session_errc::unknown_language, "unknown language '" + o.language + "'");
    const auto& s = o.sampling;
    if (s.temperature && !(*s.temperature > 0.0f && *s.temperature <= 100.0f))
        return fail(session_errc::invalid_argument, "temperature must be in (0, 100]");
    if (s.top_k && *s.top_k < 0) return fail(session_errc::invalid_argument, "top_k must be >= 0");
    if (s.top_p && !(*s.top_p > 0.0f && *s.top_p <= 1.0f))
        return fail(session_errc::invalid_argument, "top_p must be in (0, 1]");
    if (o.format == audio_format::opus && o.sample_rate != vocoder_sample_rate)
        return fail(session_errc::invalid_argument, "opus is coded from 24000 Hz; sample_rate must be 24000");
    if (o.format == audio_format::pcm16 && (o.sample_rate < 8000 || o.sample_rate > 48000))
        return fail(session_errc::invalid_argument, "sample_rate must be in 8000..48000");
    if (o.format == audio_format::opus && o.opus_frame_ms != 20 && o.opus_frame_ms != 10)
        return fail(session_errc::invalid_argument, "opus_frame_ms must be 20 or 10");
    if (o.max_frames < 0 || o.max_frames > config_.sampling.max_new_tokens)
        return fail(session_errc::invalid_argument,
                    "max_frames must be in 0.." + std::to_string(config_.sampling.max_new_tokens));
    return std::nullopt;
}

session_status input_gate::open(plan& p, const utterance_options& options) const {
    if (p.next.live > limits_.max_queued_utterances)  // the one being synthesised, and the queued
        return fail(session_errc::too_many_utterances,
                    "more than " + std::to_string(limits_.max_queued_utterances) + " utterances are waiting");
    p.next.at = state::phase::open;
    p.next.options = options;
    ++p.next.context;
    p.next.text_bytes = 0;
    ++p.next.live;
    p.frames.emplace_back(p.next.context, utterance_start{options});
    return {};
}

session_result<input_gate::plan> input_gate::plan_start(const utterance_options& options) const {
    if (state_.closed) return fail(session_errc::session_closed, "the session is closed");
    if (state_.at == state::phase::open)
        return fail(session_errc::utterance_open, "the previous utterance still takes text: end or flush it first");
    if (auto e = check_options(options)) return *e;
    plan p{state_, {}};
    if (auto opened = open(p, options); !opened) return opened.err();
    return p;
}

session_result<input_gate::plan> input_gate::plan_text(std::string_view chunk, text_end after) const {
    if (state_.closed) return fail(session_errc::session_closed, "the session is closed");
    if (state_.at == state::phase::idle) return fail(session_errc::no_utterance, "text before start");
    plan p{state_, {}};
    if (p.next.at == state::phase::flushed) {
        if (auto opened = open(p, p.next.options); !opened) return opened.err();
    }
    p.next.text_bytes += chunk.size();
    if (p.next.text_bytes > limits_.max_text_bytes)
        return fail(session_errc::text_too_long,
                    "the utterance's text exceeds " + std::to_string(limits_.max_text_bytes) + " bytes");
    if (!chunk.empty()) p.frames.emplace_back(p.next.context, text_chunk{std::string(chunk)});
    if (after == text_end::more) return p;
    return close_text(std::move(p), after);
}

session_result<input_gate::plan> input_gate::plan_close(text_end how) const {
    if (state_.closed) return fail(session_errc::session_closed, "the session is closed");
    return close_text(plan{state_, {}}, how);
}

session_result<input_gate::plan> input_gate::close_text(plan p, text_end how) const {
    switch (p.next.at) {
    case state::phase::idle: return fail(session_errc::no_utterance, "flush or end before start");
    case state::phase::flushed:
        // Nothing is buffered: a flush has nothing to do, an end forgets the carried options.
        if (how == text_end::end) p.next.at = state::phase::idle;
        return p;
    case state::phase::open:
        if (p.next.text_bytes == 0) return fail(session_errc::empty_text, "the utterance has no text");
        p.frames.emplace_back(p.next.context, end_of_text{});
        p.next.at = how == text_end::flush ? state::phase::flushed : state::phase::idle;
        return p;
    }
    return p;
}

void input_gate::cancel() {
    state_.at = state::phase::idle;
    state_.text_bytes = 0;
    state_.live = 0;
}

}  // namespace megatts

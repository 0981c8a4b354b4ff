#include "daemon/client/utterance_assembler.h"

#include <string>
#include <utility>

namespace megatts::client {
namespace {

error broken(const std::string& what) { return make_error(error_kind::mismatch, "protocol broken: " + what); }

// Checks one audio message against the previous ones of its utterance.
result<void> check_audio(const utterance_record& r, const received_audio& a) {
    const auto& h = a.header;
    const auto& s = *r.started;
    const auto n = static_cast<std::uint32_t>(r.audio.size());
    if (h.context != s.context) return broken("audio of context " + std::to_string(h.context) + " inside context " +
                                              std::to_string(s.context));
    if (h.sequence != n) return broken("sequence " + std::to_string(h.sequence) + ", expected " + std::to_string(n));
    if (((h.flags & audio_flag::first) != 0) != (n == 0)) return broken("first flag on sequence " + std::to_string(n));
    if ((h.flags & audio_flag::last) && !a.payload.empty()) return broken("the last message carries a payload");
    if (!(h.flags & audio_flag::last) && a.payload.empty()) return broken("an empty message without the last flag");
    if ((h.kind == audio_kind::opus) != (s.format == audio_format::opus)) return broken("audio kind differs from format");
    std::uint32_t expected = 0;
    if (n > 0) {
        const auto& prev = r.audio.back();
        const auto prev_samples = s.format == audio_format::opus
                                      ? static_cast<std::uint32_t>(s.opus_frame_ms.value_or(20) * 48)
                                      : static_cast<std::uint32_t>(prev.payload.size() / 2);
        expected = prev.header.timestamp + prev_samples;
    }
    if (h.timestamp != expected)
        return broken("timestamp " + std::to_string(h.timestamp) + ", expected " + std::to_string(expected));
    return {};
}

}  // namespace

result<std::optional<utterance_record>> utterance_assembler::add(received message) {
    auto& r = current_;
    if (!r.started && early_started_) r.started = std::exchange(early_started_, std::nullopt);
    if (auto* close = std::get_if<received_close>(&message))
        return make_error(error_kind::unavailable, "closed " + std::to_string(close->code) + " " + close->reason);
    if (auto* audio = std::get_if<received_audio>(&message)) {
        if (!r.started) return broken("audio before started");
        MEGATTS_TRY(check_audio(r, *audio));
        if (r.audio.empty()) r.first_audio_at = audio->arrived;
        r.audio.push_back(std::move(*audio));
        return std::optional<utterance_record>{};
    }
    auto& event = std::get<server_event>(message);
    if (auto* started = std::get_if<started_event>(&event)) {
        if (early_started_) return broken("two utterances started ahead of a done");
        if (r.started)
            early_started_ = *started;
        else
            r.started = *started;
    } else if (auto* metrics = std::get_if<metrics_event>(&event)) {
        r.metrics = *metrics;
    } else if (auto* done = std::get_if<done_event>(&event)) {
        if (!r.started || done->context != r.started->context) return broken("done of another context");
        r.done = *done;
        return finish();
    } else if (auto* e = std::get_if<error_event>(&event); e && e->context) {
        r.errors.push_back(*e);
    } else {
        r.other_events.push_back(std::move(event));
    }
    return std::optional<utterance_record>{};
}

result<std::optional<utterance_record>> utterance_assembler::finish() {
    auto r = std::exchange(current_, utterance_record{});
    const bool sent_audio = !r.audio.empty() && r.done->reason != done_reason::cancelled;
    if (sent_audio && r.done->reason != done_reason::error) {
        if (!(r.audio.back().header.flags & audio_flag::last)) return broken("the audio does not end with last");
        if (!r.metrics) return broken("no metrics for an utterance with audio");
    }
    if (static_cast<std::size_t>(r.done->messages) != r.audio.size())
        return broken("done counts " + std::to_string(r.done->messages) + " messages, received " +
                      std::to_string(r.audio.size()));
    return std::optional<utterance_record>{std::move(r)};
}

}  // namespace megatts::client

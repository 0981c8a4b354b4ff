#include "tests/e2e/client/utterance_record.h"

#include <string>
#include <utility>

namespace megatts::e2e {
namespace {

using clock = std::chrono::steady_clock;

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
                                      ? static_cast<std::uint32_t>(*s.opus_frame_ms * 48)
                                      : static_cast<std::uint32_t>(prev.payload.size() / 2);
        expected = prev.header.timestamp + prev_samples;
    }
    if (h.timestamp != expected)
        return broken("timestamp " + std::to_string(h.timestamp) + ", expected " + std::to_string(expected));
    return {};
}

}  // namespace

std::vector<std::uint8_t> utterance_record::pcm16_bytes() const {
    std::vector<std::uint8_t> out;
    for (const auto& a : audio) out.insert(out.end(), a.payload.begin(), a.payload.end());
    return out;
}

std::vector<std::vector<std::uint8_t>> utterance_record::opus_packets() const {
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& a : audio)
        if (!a.payload.empty()) out.push_back(a.payload);
    return out;
}

result<utterance_record> receive_utterance(tts_client& client, std::chrono::milliseconds deadline) {
    return utterance_reader(client).next(deadline);
}

result<utterance_record> utterance_reader::next(std::chrono::milliseconds deadline) {
    const auto end = clock::now() + deadline;
    utterance_record r;
    r.started = std::exchange(early_started_, std::nullopt);
    while (!r.done) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock::now());
        if (left.count() <= 0) return make_error(error_kind::unavailable, "no done within the deadline");
        auto message = client_.receive(left);
        if (!message) return message.err();
        if (auto* close = std::get_if<received_close>(&*message))
            return make_error(error_kind::unavailable, "closed " + std::to_string(close->code) + " " + close->reason);
        if (auto* audio = std::get_if<received_audio>(&*message)) {
            if (!r.started) return broken("audio before started");
            if (r.done) return broken("audio after done");
            MEGATTS_TRY(check_audio(r, *audio));
            if (r.audio.empty()) r.first_audio_at = clock::now();
            r.audio.push_back(std::move(*audio));
            continue;
        }
        auto& event = std::get<server_event>(*message);
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
        } else if (auto* e = std::get_if<error_event>(&event); e && e->context) {
            r.errors.push_back(*e);
        } else {
            r.other_events.push_back(std::move(event));
        }
    }
    const bool sent_audio = !r.audio.empty() && r.done->reason != done_reason::cancelled;
    if (sent_audio && r.done->reason != done_reason::error) {
        if (!(r.audio.back().header.flags & audio_flag::last)) return broken("the audio does not end with last");
        if (!r.metrics) return broken("no metrics for an utterance with audio");
    }
    if (static_cast<std::size_t>(r.done->messages) != r.audio.size())
        return broken("done counts " + std::to_string(r.done->messages) + " messages, received " +
                      std::to_string(r.audio.size()));
    return r;
}

}  // namespace megatts::e2e

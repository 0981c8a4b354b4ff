// utterance_record: everything a client received for one utterance, checked against the
// protocol's promises (PROTOCOL.md §3, §5), and what it means as audio.
//
// Contract: utterance_reader::next reads from the client until the next utterance's `done` (or
// a close, or the deadline) and fails if the stream breaks a promise: audio of another
// context, sequence numbers not consecutive from 0, `first` not exactly on sequence 0, `last`
// not exactly on the final message or carrying a payload, timestamps that skip or overlap,
// `metrics` missing while audio was sent, a `done` whose message count differs from what
// arrived. A later utterance's `started` may arrive before this one's `done` (utterances queue);
// the reader keeps it for the following next(). Events not about the utterance (stall, errors
// without context) are kept in `other_events`. Thread: the client's. Blocking: up to the
// deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "tests/e2e/client/tts_client.h"

namespace megatts::e2e {

struct utterance_record {
    std::optional<started_event> started;
    std::vector<received_audio> audio;  // in arrival order, the final empty `last` one included
    std::optional<metrics_event> metrics;
    std::optional<done_event> done;
    std::vector<error_event> errors;        // about this context
    std::vector<server_event> other_events;  // stall, connection-level errors
    std::chrono::steady_clock::time_point first_audio_at{};  // arrival of the first audio message

    // Concatenated payloads (PCM16 bytes, or nothing meaningful for Opus).
    std::vector<std::uint8_t> pcm16_bytes() const;
    // The Opus packets, in order, without the empty last message.
    std::vector<std::vector<std::uint8_t>> opus_packets() const;
};

class utterance_reader {
public:
    explicit utterance_reader(tts_client& client) : client_(client) {}
    result<utterance_record> next(std::chrono::milliseconds deadline);

private:
    tts_client& client_;
    std::optional<started_event> early_started_;  // the next utterance's, seen before this one's done
};

// One utterance when no other is queued behind it.
result<utterance_record> receive_utterance(tts_client& client, std::chrono::milliseconds deadline);

}  // namespace megatts::e2e

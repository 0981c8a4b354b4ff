// utterance_record: everything a client received for one utterance (daemon/PROTOCOL.md §3):
// its started, audio messages, metrics, done, and the errors about it.
//
// Contract: a plain value, filled by utterance_assembler (which checks the protocol's promises
// on the way). Pure accessors; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/client/received.h"

namespace megatts::client {

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
    // Microseconds of audio one message holds: an Opus packet's frame, or a PCM16 block's samples.
    std::int64_t audio_us(const received_audio& message) const;
};

}  // namespace megatts::client

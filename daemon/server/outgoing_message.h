// outgoing_message: one WebSocket message waiting in a connection's send_queue.
//
// Contract: a plain value that owns its bytes. `role` says how the queue treats it: events are
// JSON text frames counted by number; audio carries a pipeline receipt and counts by its
// duration; an audio_end is the empty `last` message that closes a context's audio (PROTOCOL.md
// §5) and is never dropped by a cancel. `context` is 0 for messages about the connection.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pipeline/session/session_events.h"

namespace megatts {

enum class message_role { event, audio, audio_end };

struct outgoing_message {
    message_role role = message_role::event;
    std::uint32_t context = 0;
    std::vector<std::uint8_t> bytes;       // JSON text (event) or header + payload (audio)
    std::optional<audio_receipt> receipt;  // audio only: handed back through audio_sent()

    bool binary() const { return role != message_role::event; }
    std::int64_t duration_us() const { return receipt ? receipt->duration_us : 0; }
};

}  // namespace megatts

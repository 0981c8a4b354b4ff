// received: one message a client of WS /v1/tts got from the server (daemon/PROTOCOL.md §4-§6):
// an event, an audio message, or the server's close frame.
//
// Contract: decode_received turns one complete WebSocket message into a value with the
// daemon's own codecs (server_event, audio_header), so a client checks the wire against the
// definitions the server uses; an undecodable event or audio header is an error
// (invalid_input). Audio messages carry their arrival time, which playback simulations need.
// Pure; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "daemon/protocol/audio_header.h"
#include "daemon/protocol/server_event.h"
#include "kernels/common/result.h"

namespace megatts::client {

struct received_audio {
    audio_header header;
    std::vector<std::uint8_t> payload;
    std::chrono::steady_clock::time_point arrived{};
};

struct received_close {
    std::uint16_t code = 0;
    std::string reason;
};

using received = std::variant<server_event, received_audio, received_close>;

// `text`: the message came in a text frame (an event), else a binary one (audio).
result<received> decode_received(bool text, std::span<const std::uint8_t> bytes,
                                 std::chrono::steady_clock::time_point arrived);

}  // namespace megatts::client

// server_event: the JSON events the server sends on WS /v1/tts (PROTOCOL.md §4), as values,
// with their encoder (the server) and decoder (client tools: the e2e client, load tests).
//
// Contract: encode_server_event gives the text of one text frame; strings that are not valid
// UTF-8 (which the server never produces) are written with U+FFFD rather than failing.
// parse_server_event is the inverse: bad_json or unknown_type for what it cannot read,
// bad_message naming a missing or mistyped member; unknown members are ignored, as the protocol
// asks of clients. A done event's trace is carried as JSON text, unparsed.
// Pure functions; any thread; never block; no exceptions escape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "daemon/protocol/audio_format_name.h"
#include "daemon/protocol/error_code.h"

namespace megatts {

struct protocol_defaults {
    std::string voice;
    std::string language = "auto";
    audio_format format = audio_format::opus;
    int opus_frame_ms = 20;
    float temperature = 0.9f;
    int top_k = 50;
    float top_p = 1.0f;
    friend bool operator==(const protocol_defaults&, const protocol_defaults&) = default;
};

struct protocol_limits {
    int max_text_bytes = 0;
    int max_message_bytes = 0;
    int queued_utterances = 0;
    int send_queue_soft_ms = 0;
    int send_queue_hard_ms = 0;
    int stall_timeout_ms = 0;
    int idle_timeout_s = 0;
    int keepalive_timeout_s = 0;
    int max_errors = 0;
    friend bool operator==(const protocol_limits&, const protocol_limits&) = default;
};

struct ready_event {
    std::string protocol;
    std::string server;
    std::string model;
    bool synthetic = false;
    std::vector<std::string> voices;
    std::vector<std::string> languages;
    protocol_defaults defaults;
    protocol_limits limits;
    friend bool operator==(const ready_event&, const ready_event&) = default;
};

enum class utterance_layout { whole, streaming };

struct started_event {
    std::uint32_t context = 0;
    audio_format format = audio_format::opus;
    int sample_rate = 0;
    std::optional<int> opus_frame_ms;  // opus only
    std::optional<int> pre_skip;       // opus only
    friend bool operator==(const started_event&, const started_event&) = default;
};

struct metrics_event {
    std::uint32_t context = 0;
    // Mark name -> milliseconds after `received`, in the fixed order of DESIGN.md §1.
    std::vector<std::pair<std::string, double>> marks;
    std::optional<double> server_ttfa_ms;
    friend bool operator==(const metrics_event&, const metrics_event&) = default;
};

enum class done_reason { end, cancelled, max_frames, error };

struct done_event {
    std::uint32_t context = 0;
    done_reason reason = done_reason::end;
    std::optional<utterance_layout> layout;  // absent when cancelled or failed
    int frames = 0;
    double audio_ms = 0;
    std::int64_t messages = 0;
    std::optional<double> rtf;
    std::optional<std::string> trace_json;  // {"traceEvents": [...]} when the start asked for it
    friend bool operator==(const done_event&, const done_event&) = default;
};

struct stall_event {
    bool stalled = true;
    int queued_ms = 0;
    friend bool operator==(const stall_event&, const stall_event&) = default;
};

struct error_event {
    error_code code = error_code::internal;
    std::string message;
    std::optional<std::uint32_t> context;
    bool fatal = false;
    friend bool operator==(const error_event&, const error_event&) = default;
};

using server_event = std::variant<ready_event, started_event, metrics_event, done_event, stall_event, error_event>;

std::string_view done_reason_name(done_reason reason);
std::string_view utterance_layout_name(utterance_layout layout);

std::string encode_server_event(const server_event& event);

std::variant<server_event, protocol_error> parse_server_event(std::string_view payload);

}  // namespace megatts

// client_message: the JSON messages a client sends on WS /v1/tts (PROTOCOL.md §2), as values,
// with their decoder (the server side) and encoder (client tools: the e2e client, load tests).
//
// Contract: parse_client_message takes the payload of one text frame and returns one message or
// the protocol error to answer with: bad_json (not a JSON object), invalid_utf8 (ill-formed
// Unicode in it), unknown_type, or bad_message naming the member that is missing, of the wrong
// type or out of range. Syntax and ranges only: whether a voice exists or an utterance is open
// is the session's business. Absent optional members stay empty so that the session applies
// its defaults. encode_client_message is the inverse for every message parse accepts.
// Pure functions; any thread; never block; no exceptions escape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "daemon/protocol/audio_format_name.h"
#include "daemon/protocol/error_code.h"

namespace megatts {

struct sampling_options {
    std::optional<std::uint64_t> seed;
    bool greedy = false;
    std::optional<float> temperature;
    std::optional<int> top_k;
    std::optional<float> top_p;
    friend bool operator==(const sampling_options&, const sampling_options&) = default;
};

struct start_message {
    std::optional<std::string> protocol;
    std::optional<std::string> voice;
    std::optional<std::string> language;
    audio_format format = audio_format::opus;
    std::optional<int> sample_rate;
    std::optional<int> opus_frame_ms;
    std::optional<int> max_frames;  // 0: the model's limit; the session checks the upper bound
    sampling_options sampling;
    std::optional<std::string> text;
    bool flush = false;
    bool end = false;
    bool trace = false;
    friend bool operator==(const start_message&, const start_message&) = default;
};

struct text_message {
    std::string text;
    bool flush = false;
    bool end = false;
    friend bool operator==(const text_message&, const text_message&) = default;
};

struct flush_message {
    friend bool operator==(const flush_message&, const flush_message&) = default;
};

struct end_message {
    friend bool operator==(const end_message&, const end_message&) = default;
};

struct cancel_message {
    friend bool operator==(const cancel_message&, const cancel_message&) = default;
};

struct client_metrics_message {
    std::optional<std::uint32_t> context;
    std::optional<double> first_played_ms;
    std::optional<std::int64_t> underruns;
    std::optional<double> buffer_ms;
    std::optional<std::int64_t> played_samples;
    std::optional<std::int64_t> decode_errors;
    friend bool operator==(const client_metrics_message&, const client_metrics_message&) = default;
};

using client_message = std::variant<start_message, text_message, flush_message, end_message, cancel_message,
                                    client_metrics_message>;

std::variant<client_message, protocol_error> parse_client_message(std::string_view payload);

std::string encode_client_message(const client_message& message);

}  // namespace megatts

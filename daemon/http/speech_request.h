// speech_request: the body of POST /v1/audio/speech (PROTOCOL.md §7.1), OpenAI's request with
// megatts's extensions, as a value.
//
// Contract: parse_speech_request reads a JSON body and returns the request, or the error to
// answer with: invalid_utf8 / bad_json for what is not a UTF-8 JSON object, bad_request naming
// the member that is missing, mistyped or out of range (input empty or over `max_text_bytes`,
// speed other than 1), unsupported_format for OpenAI's other formats (mp3, aac, flac). Voice
// and language are lower-cased, as the model names them; their existence is the session's
// check. Pure; any thread; no exceptions escape.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "daemon/protocol/client_message.h"
#include "daemon/protocol/error_code.h"

namespace megatts {

enum class speech_format {
    opus,  // Ogg Opus, audio/ogg
    wav,   // 16-bit PCM WAV, audio/wav
    pcm,   // headerless 16-bit little-endian mono PCM
};

struct speech_request {
    std::string input;
    std::optional<std::string> voice;
    std::string language = "auto";
    speech_format format = speech_format::opus;
    bool stream = false;
    int sample_rate = 24000;  // wav and pcm
    sampling_options sampling;
};

// The member an error is about, for the `param` of OpenAI's error body.
struct speech_request_error {
    protocol_error error;
    std::string param;
};

std::variant<speech_request, speech_request_error> parse_speech_request(std::string_view body,
                                                                        std::size_t max_text_bytes);

}  // namespace megatts

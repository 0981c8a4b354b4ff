// audio_format_name: the wire names of the session's audio formats (PROTOCOL.md §2.1 `format`).
//
// Contract: "opus" and "pcm16", both ways; pure; any thread.
#pragma once

#include <optional>
#include <string_view>

#include "pipeline/session/utterance_options.h"

namespace megatts {

inline std::string_view audio_format_name(audio_format format) {
    return format == audio_format::opus ? "opus" : "pcm16";
}

inline std::optional<audio_format> audio_format_from_name(std::string_view name) {
    if (name == "opus") return audio_format::opus;
    if (name == "pcm16") return audio_format::pcm16;
    return std::nullopt;
}

}  // namespace megatts

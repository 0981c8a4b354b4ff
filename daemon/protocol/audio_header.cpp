#include "daemon/protocol/audio_header.h"

#include <string>

#include "pipeline/audio/little_endian.h"

namespace megatts {
namespace {

std::uint32_t read_le32(std::span<const std::uint8_t> bytes, std::size_t at) {
    return static_cast<std::uint32_t>(bytes[at]) | static_cast<std::uint32_t>(bytes[at + 1]) << 8 |
           static_cast<std::uint32_t>(bytes[at + 2]) << 16 | static_cast<std::uint32_t>(bytes[at + 3]) << 24;
}

}  // namespace

std::vector<std::uint8_t> encode_audio_message(const audio_header& header, std::span<const std::uint8_t> payload) {
    std::vector<std::uint8_t> out;
    out.reserve(audio_header_bytes + payload.size());
    out.push_back(audio_header_version);
    out.push_back(static_cast<std::uint8_t>(header.kind));
    append_le(out, header.flags);
    append_le(out, header.context);
    append_le(out, header.sequence);
    append_le(out, header.timestamp);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

result<audio_header> decode_audio_header(std::span<const std::uint8_t> message) {
    if (message.size() < audio_header_bytes)
        return make_error(error_kind::invalid_input, "audio message of " + std::to_string(message.size()) +
                                                         " bytes is shorter than its 16-byte header");
    if (message[0] != audio_header_version)
        return make_error(error_kind::invalid_input, "audio header version " + std::to_string(message[0]) +
                                                         " (expected 1)");
    const auto kind = message[1];
    if (kind != static_cast<std::uint8_t>(audio_kind::opus) && kind != static_cast<std::uint8_t>(audio_kind::pcm16))
        return make_error(error_kind::invalid_input, "audio kind " + std::to_string(kind) + " is unknown");
    const auto known_flags = static_cast<std::uint16_t>(audio_flag::first | audio_flag::last);
    return audio_header{
        .kind = static_cast<audio_kind>(kind),
        .flags = static_cast<std::uint16_t>((message[2] | message[3] << 8) & known_flags),
        .context = read_le32(message, 4),
        .sequence = read_le32(message, 8),
        .timestamp = read_le32(message, 12),
    };
}

}  // namespace megatts

// audio_header: the 16-byte header in front of every binary audio message (PROTOCOL.md §5).
//
// Layout, little-endian: u8 version (1), u8 kind (1 Opus packet, 2 PCM16 block), u16 flags
// (bit 0 first, bit 1 last), u32 context, u32 sequence, u32 timestamp (samples of the message
// clock from the start of the utterance). encode_audio_message writes the header and payload
// into one buffer, ready for one WebSocket write. decode_audio_header is the client side: it
// refuses a message shorter than the header, another version or an unknown kind, and ignores
// reserved flag bits as the protocol says.
// Pure functions; any thread; never block. Errors: decode only (invalid_input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

inline constexpr std::size_t audio_header_bytes = 16;
inline constexpr std::uint8_t audio_header_version = 1;

enum class audio_kind : std::uint8_t {
    opus = 1,
    pcm16 = 2,
};

namespace audio_flag {
inline constexpr std::uint16_t first = 1u << 0;
inline constexpr std::uint16_t last = 1u << 1;
}  // namespace audio_flag

struct audio_header {
    audio_kind kind = audio_kind::opus;
    std::uint16_t flags = 0;
    std::uint32_t context = 0;
    std::uint32_t sequence = 0;
    std::uint32_t timestamp = 0;
    friend bool operator==(const audio_header&, const audio_header&) = default;
};

std::vector<std::uint8_t> encode_audio_message(const audio_header& header, std::span<const std::uint8_t> payload);

result<audio_header> decode_audio_header(std::span<const std::uint8_t> message);

}  // namespace megatts

// Appending little-endian integers and ASCII tags to a byte buffer.
//
// Contract: in: a value; out: its bytes appended to `out`, least significant first, whatever
// the host byte order (RIFF/WAVE and the Opus headers are little-endian by definition).
// Pure functions on the caller's buffer: any thread, no blocking, no errors.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace megatts {

template <std::unsigned_integral T>
void append_le(std::vector<std::uint8_t>& out, T value) {
    for (std::size_t byte = 0; byte < sizeof(T); ++byte) {
        out.push_back(static_cast<std::uint8_t>(value >> (8 * byte)));
    }
}

inline void append_ascii(std::vector<std::uint8_t>& out, std::string_view text) {
    out.insert(out.end(), text.begin(), text.end());
}

}  // namespace megatts

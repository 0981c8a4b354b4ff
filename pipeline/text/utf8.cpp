#include "pipeline/text/utf8.h"

#include <algorithm>

namespace megatts {
namespace {

struct sequence_scan {
    std::size_t length;    // bytes that fit the pattern of one well-formed sequence
    std::size_t expected;  // that sequence's full length; 0 when the lead byte starts none
};

// Matches bytes[at..] against the one row of Table 3-7 that its lead byte selects. Only the
// second byte has a row-specific range; that is what excludes overlongs, surrogates and code
// points above U+10FFFF.
sequence_scan scan_sequence(std::string_view bytes, std::size_t at) {
    const auto lead = static_cast<unsigned char>(bytes[at]);
    if (lead < 0x80) return {1, 1};
    std::size_t expected = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        expected = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        expected = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        expected = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return {0, 0};
    }
    std::size_t length = 1;
    while (length < expected && at + length < bytes.size()) {
        const auto byte = static_cast<unsigned char>(bytes[at + length]);
        if (byte < low || byte > high) break;
        low = 0x80;
        high = 0xBF;
        ++length;
    }
    return {length, expected};
}

bool complete(const sequence_scan& scan) {
    return scan.expected != 0 && scan.length == scan.expected;
}

}  // namespace

std::size_t utf8_valid_prefix_length(std::string_view bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
        const sequence_scan scan = scan_sequence(bytes, at);
        if (!complete(scan)) break;
        at += scan.length;
    }
    return at;
}

bool utf8_truncated_sequence(std::string_view bytes) {
    if (bytes.empty()) return false;
    const sequence_scan scan = scan_sequence(bytes, 0);
    return scan.expected != 0 && scan.length == bytes.size() && scan.length < scan.expected;
}

std::string utf8_replace_invalid(std::string_view bytes) {
    constexpr std::string_view replacement_character = "\xEF\xBF\xBD";
    std::string out;
    out.reserve(bytes.size());
    std::size_t at = 0;
    while (at < bytes.size()) {
        const sequence_scan scan = scan_sequence(bytes, at);
        if (complete(scan)) {
            out.append(bytes.substr(at, scan.length));
        } else {
            out.append(replacement_character);
        }
        at += std::max<std::size_t>(scan.length, 1);
    }
    return out;
}

}  // namespace megatts

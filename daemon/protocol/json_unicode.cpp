#include "daemon/protocol/json_unicode.h"

#include <charconv>
#include <cstdint>
#include <optional>

#include "pipeline/text/utf8.h"

namespace megatts {
namespace {

// The code unit of the \uXXXX escape at text[at] (which is the backslash), if there is one.
std::optional<std::uint16_t> unicode_escape_at(std::string_view text, std::size_t at) {
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return std::nullopt;
    std::uint16_t unit = 0;
    const char* begin = text.data() + at + 2;
    const auto [end, ec] = std::from_chars(begin, begin + 4, unit, 16);
    if (ec != std::errc{} || end != begin + 4) return std::nullopt;
    return unit;
}

bool is_high_surrogate(std::uint16_t unit) { return unit >= 0xD800 && unit <= 0xDBFF; }
bool is_low_surrogate(std::uint16_t unit) { return unit >= 0xDC00 && unit <= 0xDFFF; }

}  // namespace

bool json_unicode_problem(std::string_view text) {
    if (utf8_valid_prefix_length(text) != text.size()) return true;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (!in_string) {
            in_string = c == '"';
            continue;
        }
        if (c == '"') {
            in_string = false;
        } else if (c == '\\') {
            const auto unit = unicode_escape_at(text, i);
            if (!unit) {
                ++i;  // a one-character escape such as \" or \\: skip what it escapes
                continue;
            }
            if (is_low_surrogate(*unit)) return true;
            if (is_high_surrogate(*unit)) {
                const auto next = unicode_escape_at(text, i + 6);
                if (!next || !is_low_surrogate(*next)) return true;
                i += 6;
            }
            i += 5;
        }
    }
    return false;
}

}  // namespace megatts

#include "pipeline/text/nfc.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

namespace megatts {
namespace {

// Longer than any canonical decomposition (Unicode's longest has 4 code points).
using decomposition = std::array<utf8proc_int32_t, 8>;

// The canonical decomposition of c into `out`; returns how many code points it has (0 for a
// value that is not a code point).
std::size_t decompose(char32_t c, decomposition& out) {
    const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c),
                                                       out.data(), out.size(),
                                                       UTF8PROC_DECOMPOSE, nullptr);
    return n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), out.size());
}

bool is_starter(utf8proc_int32_t c) {
    return utf8proc_get_property(c)->combining_class == 0;
}

// Which starters take part in canonical compositions, read off utf8proc's own decomposition
// data so that the answers always agree with the normalization it performs. A starter at a
// non-first position of a full decomposition composes with what precedes it (e.g. U+0BBE in
// U+0BCA, jamo V and T in Hangul syllables); the first code point of a decomposition composes
// with what follows. Both sets are supersets of what the composition algorithm uses (they also
// hold the halves of composition-excluded characters), which only makes the predicates more
// cautious.
struct composition_starters {
    std::vector<utf8proc_int32_t> second;
    std::vector<utf8proc_int32_t> first;
};

composition_starters scan_compositions() {
    composition_starters starters;
    decomposition parts;
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
        const std::size_t n = decompose(c, parts);
        if (n < 2) continue;
        starters.first.push_back(parts[0]);
        for (std::size_t i = 1; i < n; ++i) {
            if (is_starter(parts[i])) starters.second.push_back(parts[i]);
        }
    }
    for (auto* set : {&starters.first, &starters.second}) {
        std::sort(set->begin(), set->end());
        set->erase(std::unique(set->begin(), set->end()), set->end());
    }
    return starters;
}

const composition_starters& composition_table() {
    static const composition_starters table = scan_compositions();
    return table;
}

// U+11A7, the Hangul trailing-consonant base. It is no jamo of any syllable (trailing
// consonants are U+11A8..U+11C2), so NFC keeps it as it is; utf8proc 2.8 (Debian 12's) composes
// it into a preceding LV syllable as a trailing consonant of index 0 and so drops it. Found by
// the tokenizer's fuzz target: "가" + U+11A7 + " " lost the U+11A7 whole but not in chunks.
constexpr std::string_view k_trailing_base = "\xE1\x86\xA7";

result<void> append_utf8proc_nfc(std::string_view text, std::string& out) {
    utf8proc_uint8_t* raw = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                            static_cast<utf8proc_ssize_t>(text.size()), &raw,
                                            static_cast<utf8proc_option_t>(UTF8PROC_STABLE |
                                                                           UTF8PROC_COMPOSE));
    const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> normalized(raw, &std::free);
    if (n < 0) {
        return make_error(n == UTF8PROC_ERROR_INVALIDUTF8 ? error_kind::invalid_input
                                                          : error_kind::internal,
                          std::string("NFC normalization failed: ") + utf8proc_errmsg(n));
    }
    out.append(reinterpret_cast<const char*>(normalized.get()), static_cast<std::size_t>(n));
    return {};
}

}  // namespace

result<void> append_nfc(std::string_view text, std::string& out) {
    if (std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) {
        out.append(text);  // ASCII is NFC, and this is most text
        return {};
    }
    // U+11A7 is a starter that composes with nothing on either side, so NFC(a + U+11A7 + b) is
    // NFC(a) + U+11A7 + NFC(b): the pieces around it go to utf8proc apart. On an error `out`
    // is left as it was.
    const std::size_t size = out.size();
    for (auto at = text.find(k_trailing_base); at != std::string_view::npos; at = text.find(k_trailing_base)) {
        if (auto piece = append_utf8proc_nfc(text.substr(0, at), out); !piece) {
            out.resize(size);
            return piece;
        }
        out.append(k_trailing_base);
        text.remove_prefix(at + k_trailing_base.size());
    }
    auto rest = append_utf8proc_nfc(text, out);
    if (!rest) out.resize(size);
    return rest;
}

bool nfc_boundary_before(char32_t c) {
    decomposition parts;
    if (decompose(c, parts) == 0) return false;
    const auto& second = composition_table().second;
    return is_starter(parts[0]) && !std::binary_search(second.begin(), second.end(), parts[0]);
}

bool nfc_stable_start(char32_t c) {
    decomposition parts;
    if (decompose(c, parts) != 1 || parts[0] != static_cast<utf8proc_int32_t>(c)) return false;
    const auto& first = composition_table().first;
    return is_starter(parts[0]) && !std::binary_search(first.begin(), first.end(), parts[0]);
}

}  // namespace megatts

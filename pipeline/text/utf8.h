// UTF-8 well-formedness, by the byte ranges of Unicode Table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF.
//
// In: arbitrary bytes. Out: lengths, a verdict, or repaired text.
// Thread: pure functions, any thread. Blocking: never. Errors: none (invalid input is an answer,
// not a failure).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace megatts {

// Length of the longest prefix of `bytes` that is well-formed UTF-8 (bytes.size() when all is).
std::size_t utf8_valid_prefix_length(std::string_view bytes);

// Whether `bytes` is the start of one well-formed sequence that more bytes would complete, e.g.
// the first two bytes of a three-byte character. False for empty input.
bool utf8_truncated_sequence(std::string_view bytes);

// `bytes` with every maximal ill-formed subpart replaced by U+FFFD: what Python's
// bytes.decode("utf-8", errors="replace") gives, and so what Hugging Face tokenizers decode to.
std::string utf8_replace_invalid(std::string_view bytes);

}  // namespace megatts

// Unicode NFC normalization (utf8proc), and the two facts about single characters that let a
// text be normalized piece by piece as it arrives.
//
// In: well-formed UTF-8 (append_nfc) or code points. Out: normalized UTF-8 appended to a string,
// or a verdict. Thread: any thread; the first call of a boundary predicate builds an immutable
// table once (about 5 ms, thread-safe static initialization). Blocking: never. Errors:
// invalid_input from append_nfc for ill-formed UTF-8, internal when utf8proc runs out of memory.
#pragma once

#include <string>
#include <string_view>

#include "kernels/common/result.h"

namespace megatts {

// Appends NFC(text) to `out`.
result<void> append_nfc(std::string_view text, std::string& out);

// Whether NFC never joins `c` with what precedes it: for all texts a and b,
// NFC(a + c + b) == NFC(a) + NFC(c + b). So a text may be normalized in runs cut before such
// characters. True when c's canonical decomposition starts with a starter (combining class 0)
// that is not the second half of any canonical composition; false e.g. for combining marks and
// for the Hangul vowel and trailing-consonant jamo.
bool nfc_boundary_before(char32_t c);

// Whether NFC(c + b) starts with `c` for every text b: c is a starter that is its own canonical
// decomposition and is not the first half of any canonical composition. False e.g. for 'e'
// ("e" + U+0301 becomes "é"); true for ',', ' ' and CJK ideographs.
bool nfc_stable_start(char32_t c);

}  // namespace megatts

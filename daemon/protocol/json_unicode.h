// json_unicode: why a JSON text that failed to parse was not Unicode, so that the protocol can
// answer `invalid_utf8` rather than `bad_json` (PROTOCOL.md §4.6).
//
// Contract: json_unicode_problem(text) is true when `text` holds bytes that are not well-formed
// UTF-8, or a \u escape inside a string that decodes to a lone UTF-16 surrogate (a high one not
// followed by a low one, or a low one alone), which no UTF-8 string can hold. It looks only at
// what a JSON lexer would see; it does not otherwise validate JSON. Pure; any thread.
#pragma once

#include <string_view>

namespace megatts {

bool json_unicode_problem(std::string_view text);

}  // namespace megatts

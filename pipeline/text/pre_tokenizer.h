// pre_tokenizer: splits normalized text into the pieces that byte-level BPE encodes one by one,
// with Qwen2's own pre-tokenizer regex (DESIGN.md §3; not the "Mistral" variant)
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// matched with PCRE2 (UTF, Unicode properties). \s is spelled out as the Unicode White_Space
// set, which is what it means in Hugging Face's Oniguruma: PCRE2's own \s also takes U+180E,
// a format character since Unicode 6.3. Every character falls in a class that some alternative
// starts with, so the pieces tile the text. Letter and digit classes come from PCRE2's tables
// (Unicode 14 in PCRE2 10.42).
//
// For text that may continue (incremental_tokenizer), split() stops at the first piece that a
// continuation could change. PCRE2's hard partial matching flags every match that had to look
// past the end of the text: a letter or whitespace run that reaches the end, a lone "'" that
// may become "'s", a "\r" that may become "\r\n". A match that never looked there is final.
//
// Thread: split() is const and safe on many threads at once (match data is per call).
// Blocking: never. Errors: create() fails (internal) if PCRE2 was built without Unicode
// support; split() fails (internal) if PCRE2 reports a resource limit.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"

struct pcre2_real_code_8;

namespace megatts {

class pre_tokenizer {
public:
    static result<pre_tokenizer> create();

    // The pieces of `text` (views into it), in order. With `more_may_follow`, only those that
    // no text appended later can change.
    result<std::vector<std::string_view>> split(std::string_view text, bool more_may_follow) const;

private:
    struct code_deleter {
        void operator()(pcre2_real_code_8* code) const;
    };

    explicit pre_tokenizer(std::unique_ptr<pcre2_real_code_8, code_deleter> code);

    std::unique_ptr<pcre2_real_code_8, code_deleter> code_;
};

}  // namespace megatts

// incremental_tokenizer: tokenizes text that arrives in pieces (e.g. an LLM's output, word by
// word) and releases each token as soon as it is final. Whatever the chunking, the ids of all
// push() calls followed by finish() are exactly bpe_tokenizer::encode() of the whole text.
//
// Release rule: a token is released once no continuation of the text can change it.
//  - A UTF-8 sequence cut between chunks waits for its remaining bytes.
//  - From the first position where the text could be the start of an added token (a trailing
//    "<|im_", or a "<tts_text_bos" that may still become "<tts_text_bos_single>"), everything
//    waits until that is decided. An added token is released with the text before it.
//  - Before that position, the text is cut into runs, each starting at a character that NFC
//    never joins with what precedes it (nfc.h: not a combining mark, not a Hangul vowel or final
//    jamo, ...). All runs but the last are final once normalized; the last one may still take
//    combining marks, so it is held back.
//  - The normalized final runs are split by the pre-tokenizer regex. A piece is final when its
//    match did not need to look beyond the text (pre_tokenizer.h): a letter run, a whitespace
//    run, a "'" or a "\r" at the end waits; a digit, or a letter run followed by a space, does
//    not. The last run's first character serves as that look-ahead when NFC keeps it whatever
//    follows (a space, most punctuation, a CJK ideograph; not a Latin letter).
//  - Pieces are released in order, up to the last final piece that ends at a run boundary;
//    each is encoded by BPE whole.
// So a word's tokens are released when the space or punctuation after it arrives; for
// "Hello world" pushed as "Hello", " world", "Hello" comes with the second push, and " world"
// with finish().
//
// In: UTF-8 text in chunks of any size, cut anywhere, even inside a character or added token.
// Out: the ids that became final. Thread: one utterance's text, one thread at a time (not
// synchronized); the tokenizer it borrows must outlive it. Blocking: never; a push costs time
// linear in the text held back, usually less than a word (text without any break, e.g. a long
// run of letters, is held whole: the caller's text-size limit bounds it).
// Errors: push() fails with invalid_input when the text stops being UTF-8 (the failing chunk is
// dropped, and the state is as before the call); finish() fails with invalid_input when the
// text ends inside a UTF-8 sequence. After finish(), whatever it returned, the object is empty
// and ready for the next text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/text/bpe_tokenizer.h"

namespace megatts {

class incremental_tokenizer {
public:
    explicit incremental_tokenizer(const bpe_tokenizer& tokenizer);

    // Appends `chunk` to the text; returns the ids that are now final.
    result<std::vector<std::int32_t>> push(std::string_view chunk);

    // Ends the text; returns the remaining ids.
    result<std::vector<std::int32_t>> finish();

private:
    // Releases the final ids of pending_ and drops the text they cover from it.
    result<std::vector<std::int32_t>> release();

    // For a stretch of text without added tokens that may continue: appends the ids that are
    // final and returns how many bytes of `segment` they cover.
    result<std::size_t> release_final_prefix(std::string_view segment,
                                             std::vector<std::int32_t>& out) const;

    const bpe_tokenizer* tokenizer_;
    std::string pending_;  // received, not yet released; may end inside a UTF-8 sequence
};

}  // namespace megatts

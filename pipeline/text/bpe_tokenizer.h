// bpe_tokenizer: Qwen2's byte-level BPE tokenizer, id for id what Hugging Face's
// Qwen2Tokenizer gives for the Qwen3-TTS checkpoints (DESIGN.md §3):
//   1. the added tokens of tokenizer_config.json (ids 151643..151675: "<|im_start|>",
//      "<tts_pad>", "<think>", ...) are cut out of the raw text first, leftmost then longest;
//   2. each stretch of text between them is NFC-normalized (nfc.h),
//   3. split into pieces by Qwen2's pre-tokenizer regex (pre_tokenizer.h),
//   4. and each piece encoded by byte-level BPE (byte_level_bpe.h).
// No BOS or EOS is added.
//
// In: a checkpoint directory holding vocab.json, merges.txt and tokenizer_config.json; then
// UTF-8 text (encode) or ids (decode). Out: token ids; text.
// Thread: immutable after load(); all methods are const and safe on many threads at once.
// Blocking: load() reads the three files (about 0.3 s); nothing else blocks.
// Errors: load() fails with the error of the file that is missing or malformed, naming it
// (see byte_level_bpe.h; for tokenizer_config.json: not a Qwen2Tokenizer, an added token that
// is malformed, uses an option other than the plain verbatim match, or takes an id of
// vocab.json). encode() fails with invalid_input for text that is not UTF-8; decode() with
// invalid_input for an id that is neither in vocab.json nor added; token_id() with not_found.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/text/added_token_set.h"
#include "pipeline/text/byte_level_bpe.h"
#include "pipeline/text/pre_tokenizer.h"

namespace megatts {

class bpe_tokenizer {
public:
    static result<bpe_tokenizer> load(const std::string& dir);

    result<std::vector<std::int32_t>> encode(std::string_view text) const;

    // The UTF-8 text of `ids`, added tokens spelled out; byte sequences that are not UTF-8
    // (a character cut between ids) become U+FFFD, as in Hugging Face's decode().
    result<std::string> decode(std::span<const std::int32_t> ids) const;

    // The id of an added token, e.g. token_id("<|im_end|>") == 151645.
    result<std::int32_t> token_id(std::string_view added_token) const;

    // Steps 2-4 for one stretch of well-formed UTF-8 text without added tokens in it: appends
    // its ids to `out`. For incremental_tokenizer, which also drives the steps one by one
    // through the accessors below.
    result<void> encode_segment(std::string_view segment, std::vector<std::int32_t>& out) const;

    const added_token_set& added_tokens() const { return added_tokens_; }
    const pre_tokenizer& splitter() const { return splitter_; }
    const byte_level_bpe& model() const { return model_; }

private:
    bpe_tokenizer(byte_level_bpe model, added_token_set added_tokens, pre_tokenizer splitter);

    byte_level_bpe model_;
    added_token_set added_tokens_;
    pre_tokenizer splitter_;
};

}  // namespace megatts

// tts_prompt_ids: the token ids of the text prompt of the CustomVoice models,
//   <|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n
// tokenized as one string and sliced the way the official generate() slices it: role =
// ids[:3], text = ids[3:-5]. Because the whole template is tokenized, text that starts with
// newlines shares a token with the role's "\n" (text "\nHi" gives role [<|im_start|>,
// assistant, "\n\n"]); that is the official behaviour, kept on purpose. Added tokens written in
// `text` are matched as such, also as in the official code.
//
// In: UTF-8 text. Out: the three id lists. Thread: any (the tokenizer is const).
// Blocking: never. Errors: invalid_input for text that is not UTF-8.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/text/bpe_tokenizer.h"

namespace megatts {

struct tts_prompt_ids {
    std::vector<std::int32_t> ids;       // the whole template
    std::vector<std::int32_t> role_ids;  // ids[:3]
    std::vector<std::int32_t> text_ids;  // ids[3:-5]
};

result<tts_prompt_ids> tokenize_tts_prompt(const bpe_tokenizer& tokenizer, std::string_view text);

}  // namespace megatts

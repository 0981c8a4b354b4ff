#include "pipeline/text/tts_prompt_ids.h"

#include <cstddef>
#include <string>
#include <utility>

namespace megatts {

result<tts_prompt_ids> tokenize_tts_prompt(const bpe_tokenizer& tokenizer, std::string_view text) {
    std::string prompt = "<|im_start|>assistant\n";
    prompt.append(text);
    prompt.append("<|im_end|>\n<|im_start|>assistant\n");
    auto ids = tokenizer.encode(prompt);
    if (!ids) return ids.err();
    // There are always at least 8 ids: the template's added tokens cut it into
    // "assistant\n{text}", "\n" and "assistant\n", and the regex never joins the letters of
    // "assistant" with a newline, so the first and the last of these give at least two ids.
    constexpr std::ptrdiff_t role_size = 3;
    constexpr std::ptrdiff_t tail_size = 5;
    tts_prompt_ids prompt_ids;
    prompt_ids.role_ids.assign(ids->begin(), ids->begin() + role_size);
    prompt_ids.text_ids.assign(ids->begin() + role_size, ids->end() - tail_size);
    prompt_ids.ids = std::move(*ids);
    return prompt_ids;
}

}  // namespace megatts

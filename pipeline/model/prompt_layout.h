// prompt_layout: the talker prompt of a CustomVoice utterance, as rows of ids, in
// both layouts of the official generate(): non-streaming (the whole text in the
// prompt, the default) and streaming-text (one text token per frame).
//
// Contract: build_prompt() takes the tokenized chat template
// "<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n" and returns the
// prompt rows, the codec prefix and the per-frame text track. Unknown speaker or
// language, an empty text, or a template that is not of that form: a named error
// (error_kind::invalid_input / not_found). Pure; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/prompt_row.h"
#include "kernels/common/result.h"
#include "pipeline/model/model_config.h"

namespace megatts {

enum class text_layout { non_streaming, streaming };

struct prompt_plan {
    std::vector<prompt_row> rows;
    std::vector<std::int32_t> codec_prefix;  // tag ids and the speaker id, as in the golden files
    std::vector<std::int32_t> text_ids;      // the text tokens t_0..t_{N-1}
    // Text-track ids of frames 0, 1, ...; past the end every frame gets tts_pad.
    std::vector<std::int32_t> trailing_text;
    std::int32_t pad_text_id = 0;

    std::int32_t text_track(int frame) const {
        return frame < static_cast<int>(trailing_text.size()) ? trailing_text[static_cast<std::size_t>(frame)]
                                                              : pad_text_id;
    }
};

result<prompt_plan> build_prompt(const model_config& config, std::span<const std::int32_t> template_ids,
                                 std::string_view speaker, std::string_view language, text_layout layout);

}  // namespace megatts

// chat_template: the text around an utterance's text in the talker prompt, as the official
// implementation writes it: "<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n".
// Tokenized whole, the first k_template_role_ids ids and the last k_template_tail_ids ids are
// the template's own (pipeline/model/prompt_layout.cpp checks exactly this shape); the ids in
// between are the text tokens. The tail follows an added token, so its ids never depend on the
// text: tokenizing k_template_tail alone gives them.
//
// Contract: compile-time constants.
#pragma once

#include <cstddef>
#include <string_view>

namespace megatts {

inline constexpr std::string_view k_template_head = "<|im_start|>assistant\n";
inline constexpr std::string_view k_template_tail = "<|im_end|>\n<|im_start|>assistant\n";
inline constexpr std::size_t k_template_role_ids = 3;
inline constexpr std::size_t k_template_tail_ids = 5;

}  // namespace megatts

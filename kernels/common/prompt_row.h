// prompt_row: one talker input position of a prompt, as ids: the input embedding is
// P(text_id) + C(codec_id), either part absent (-1). pipeline/model/prompt_layout
// builds the rows; every backend turns them into embeddings the same way.
#pragma once

#include <cstdint>

namespace megatts {

struct prompt_row {
    static constexpr std::int32_t none = -1;
    std::int32_t text_id = none;   // text vocabulary id, through the text projection
    std::int32_t codec_id = none;  // codec vocabulary id, through the talker's codec embedding
};

}  // namespace megatts

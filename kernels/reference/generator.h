// generator: the reference generation loop of one utterance, frame by frame, as the
// official generate() runs it: prefill the prompt, then per frame sample codebook 0
// from the talker logits (processors first), stop on EOS (no frame), run the code
// predictor for codebooks 1..15, and feed the sum of the 16 code embeddings plus the
// frame's text-track vector back into the talker.
//
// Contract: prefill() once, then next_frame() until it returns no frame (EOS). The
// caller supplies each frame's text-track id (a trailing text token, or tts_pad) and
// decides when to stop otherwise (frame caps, runaway guard). An optional trace
// records every intermediate the golden files hold. One thread per generator; the
// weights may be shared.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/common/prompt_row.h"
#include "kernels/reference/decoder_layer.h"
#include "kernels/reference/sampler.h"
#include "kernels/reference/talker.h"
#include "kernels/reference/weights.h"

namespace megatts::ref {

inline constexpr int k_max_code_groups = 16;
using frame_codes = std::array<std::int32_t, k_max_code_groups>;

struct generation_options {
    sampling_params talker;
    sampling_params code_predictor;
    talker_processors processors;
    std::uint64_t seed = 0;
};

struct generation_trace {
    std::vector<float> prefill_embeds;          // [L, H]
    std::vector<layer_trace> prefill_layer0;    // one per prompt row
    std::vector<float> talker_hidden;           // [S, H]
    std::vector<float> logits_raw;              // [S, codec_vocab]
    std::vector<float> logits_processed;        // [S, codec_vocab]
    std::vector<std::vector<float>> cp_logits;  // per frame: [15, vocab]
    std::vector<float> frame_input_embeds;      // [T, H]
};

class generator {
public:
    generator(const talker_weights& talker, const code_predictor_weights& cp, generation_options options,
              generation_trace* trace = nullptr);

    // Runs the prompt; `rows` must not be empty.
    void prefill(std::span<const prompt_row> rows);

    // Produces the next frame, or nullopt when codebook 0 came out as EOS.
    std::optional<frame_codes> next_frame(std::int32_t text_track_id);

    int frames() const { return static_cast<int>(history_.size()); }

private:
    void embed_row(const prompt_row& row, float* out) const;

    const talker_weights& talker_;
    const code_predictor_weights& cp_;
    generation_options options_;
    generation_trace* trace_;
    talker_state state_;
    std::vector<float> hidden_;         // post-norm hidden of the last position
    std::vector<std::int32_t> history_; // codebook 0 of every emitted frame
};

}  // namespace megatts::ref

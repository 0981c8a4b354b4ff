// code_predictor: the reference code predictor: given the talker's post-norm hidden
// state and codebook 0 of a frame, it predicts codebooks 1..15 in 15 passes over a
// fresh 16-position KV cache: position 0 is the hidden state, position 1 the
// TALKER's codec embedding of c0, position j+1 (j >= 1) the code predictor's table
// j-1 of c_j; lm_head[j] of the last position gives c_{j+1}. Every input passes
// small_to_mtp_projection when the model has one (1.7B).
//
// Contract: run_frame() calls choose(j, logits) once per pass j = 0..14 with that
// pass's logits (vocab floats) and uses the returned id as codebook j+1; a sampler
// or a teacher-forcing lookup both fit. Pure apart from the callback; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "kernels/reference/weights.h"

namespace megatts::ref {

using code_chooser = std::function<std::int32_t(int pass, std::span<const float> logits)>;

// Writes codebooks 1..15 to codes[0..14].
void code_predictor_frame(const code_predictor_weights& cp, const talker_weights& talker,
                          const float* talker_hidden, std::int32_t c0, const code_chooser& choose,
                          std::int32_t* codes);

// The next talker input of a frame: C(c0) + sum_j table_j(c_{j+1}) + text vector.
void frame_embedding(const code_predictor_weights& cp, const talker_weights& talker,
                     std::span<const std::int32_t> codes16, const float* text_vector, float* out);

}  // namespace megatts::ref

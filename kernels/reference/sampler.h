// sampler: the logits processors and token choice of the official generate(), in the
// transformers 4.57.3 order: repetition penalty -> min-new-tokens EOS mask -> token
// suppression -> (when sampling) temperature -> top-k -> top-p -> draw.
//
// Contract: pure functions on caller-owned logits. The draw uses sampling_math.h
// (Philox counter (seed, frame, codebook) and a shared exp), so the CUDA sampler,
// fed the same processed logits and counters, picks the same token. Greedy mode is
// arg-max with the lowest index winning ties. No errors, no state, any thread.
#pragma once

#include <cstdint>
#include <span>

namespace megatts::ref {

struct sampling_params {
    bool greedy = false;
    float temperature = 1.0f;
    int top_k = 0;       // 0: off
    float top_p = 1.0f;  // 1: off
};

// The talker's processors, which apply in greedy mode too.
struct talker_processors {
    float repetition_penalty = 1.0f;
    int min_new_tokens = 0;            // EOS masked while fewer tokens were generated
    std::int32_t eos = -1;
    std::int32_t suppress_begin = 0;   // ids [begin, end) except eos are never emitted
    std::int32_t suppress_end = 0;
};

// Applies the talker processors in place. `history` holds the codebook-0 ids
// generated so far in this utterance (its size is the step index).
void apply_talker_processors(std::span<float> logits, std::span<const std::int32_t> history,
                             const talker_processors& p);

// Chooses a token from processed logits. `uniform` is the draw in [0, 1) for this
// token (sampling_uniform(seed, frame, codebook)); unused when greedy.
std::int32_t choose_token(std::span<const float> logits, const sampling_params& p, float uniform);

}  // namespace megatts::ref

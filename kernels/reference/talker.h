// talker: the reference talker LM: the text projection, codec embedding, 28-layer
// decoder stack with its KV cache, final norm and codec head.
//
// Contract: talker_state holds one utterance's KV cache; step() consumes one input
// embedding (dims.body.hidden floats) at the next position and writes the
// post-final-norm hidden state, which feeds both the codec head and the code
// predictor. The free functions are pure. Single-threaded per state; the weights
// may be shared by any number of states.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/reference/decoder_layer.h"
#include "kernels/reference/weights.h"

namespace megatts::ref {

// P(id) = fc2(silu(fc1(text_embedding[id]))): a text-track vector of `hidden` floats.
void project_text(const talker_weights& w, std::int32_t text_id, float* out);

// C(id): a row of the talker's codec embedding (codebook 0, control and speaker ids).
const float* codec_embedding_row(const talker_weights& w, std::int32_t codec_id);

// logits = codec_head(hidden), dims.codec_vocab floats.
void talker_logits(const talker_weights& w, const float* hidden, float* logits);

class talker_state {
public:
    explicit talker_state(const talker_weights& w) : w_(&w), cache_(w.layers.size()) {}

    int positions() const { return cache_.empty() ? 0 : cache_.front().positions(); }

    // Runs one position. `layer0` (optional) receives layer 0's intermediates.
    void step(const float* input, float* hidden, layer_trace* layer0 = nullptr);

private:
    const talker_weights* w_;
    std::vector<kv_layer_cache> cache_;
};

}  // namespace megatts::ref

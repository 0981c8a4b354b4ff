#include "kernels/reference/code_predictor.h"

#include <vector>

#include "kernels/reference/decoder_layer.h"
#include "kernels/reference/ops.h"
#include "kernels/reference/talker.h"

namespace megatts::ref {
namespace {

// One position through the projection (if any) and the 5 layers; returns the
// final-norm output in `normed`.
void forward_position(const code_predictor_weights& cp, std::vector<kv_layer_cache>& cache,
                      const float* embedding, float* normed) {
    const auto& d = cp.dims.body;
    std::vector<float> x(d.hidden);
    if (cp.dims.has_projection) {
        matvec(cp.projection.data.data(), d.hidden, cp.dims.embed_width, embedding, x.data());
        for (int i = 0; i < d.hidden; ++i) x[i] += cp.projection_bias[i];
    } else {
        x.assign(embedding, embedding + d.hidden);
    }
    for (std::size_t l = 0; l < cp.layers.size(); ++l) decoder_layer_step(cp.layers[l], d, cache[l], x.data());
    rms_norm(x.data(), cp.norm.data(), d.hidden, d.rms_eps, normed);
}

}  // namespace

void code_predictor_frame(const code_predictor_weights& cp, const talker_weights& talker,
                          const float* talker_hidden, std::int32_t c0, const code_chooser& choose,
                          std::int32_t* codes) {
    std::vector<kv_layer_cache> cache(cp.layers.size());
    std::vector<float> normed(cp.dims.body.hidden), logits(cp.dims.vocab);

    forward_position(cp, cache, talker_hidden, normed.data());
    const float* next = codec_embedding_row(talker, c0);
    for (int j = 0; j < cp.dims.steps(); ++j) {
        forward_position(cp, cache, next, normed.data());
        const auto& head = cp.lm_head[static_cast<std::size_t>(j)];
        matvec(head.data.data(), head.rows, head.cols, normed.data(), logits.data());
        codes[j] = choose(j, logits);
        next = cp.codec_embedding[static_cast<std::size_t>(j)].row(codes[j]);
    }
}

void frame_embedding(const code_predictor_weights& cp, const talker_weights& talker,
                     std::span<const std::int32_t> codes16, const float* text_vector, float* out) {
    const int h = talker.dims.body.hidden;
    const float* c0 = codec_embedding_row(talker, codes16[0]);
    for (int i = 0; i < h; ++i) out[i] = c0[i];
    for (int j = 0; j < cp.dims.steps(); ++j) {
        const float* e = cp.codec_embedding[static_cast<std::size_t>(j)].row(codes16[static_cast<std::size_t>(j) + 1]);
        for (int i = 0; i < h; ++i) out[i] += e[i];
    }
    for (int i = 0; i < h; ++i) out[i] += text_vector[i];
}

}  // namespace megatts::ref

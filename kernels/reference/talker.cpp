#include "kernels/reference/talker.h"

#include "kernels/reference/ops.h"

namespace megatts::ref {

void project_text(const talker_weights& w, std::int32_t text_id, float* out) {
    const int th = w.dims.text_hidden;
    std::vector<float> mid(th);
    matvec(w.text_fc1.data.data(), th, th, w.text_embedding.row(text_id), mid.data());
    for (int i = 0; i < th; ++i) mid[i] = silu(mid[i] + w.text_fc1_bias[i]);
    const int h = w.dims.body.hidden;
    matvec(w.text_fc2.data.data(), h, th, mid.data(), out);
    for (int i = 0; i < h; ++i) out[i] += w.text_fc2_bias[i];
}

const float* codec_embedding_row(const talker_weights& w, std::int32_t codec_id) {
    return w.codec_embedding.row(codec_id);
}

void talker_logits(const talker_weights& w, const float* hidden, float* logits) {
    matvec(w.codec_head.data.data(), w.codec_head.rows, w.codec_head.cols, hidden, logits);
}

void talker_state::step(const float* input, float* hidden, layer_trace* layer0) {
    const auto& d = w_->dims.body;
    std::vector<float> x(input, input + d.hidden);
    for (std::size_t l = 0; l < w_->layers.size(); ++l)
        decoder_layer_step(w_->layers[l], d, cache_[l], x.data(), l == 0 ? layer0 : nullptr);
    rms_norm(x.data(), w_->norm.data(), d.hidden, d.rms_eps, hidden);
}

}  // namespace megatts::ref

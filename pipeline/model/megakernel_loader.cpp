#include "pipeline/model/megakernel_loader.h"

#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace {

namespace tn = tensor_names;

const std::uint16_t* bf16_view(const checkpoint& c, const std::string& name) {
    return reinterpret_cast<const std::uint16_t*>(c.tensor(name).bytes.data());
}

megakernel_layer_tensors layer(const checkpoint& c, std::string (*name)(int, layer_tensor), int i) {
    auto v = [&](layer_tensor t) { return bf16_view(c, name(i, t)); };
    return {v(layer_tensor::input_norm), v(layer_tensor::q_proj),   v(layer_tensor::k_proj),
            v(layer_tensor::v_proj),     v(layer_tensor::q_norm),   v(layer_tensor::k_norm),
            v(layer_tensor::o_proj),     v(layer_tensor::post_norm), v(layer_tensor::gate_proj),
            v(layer_tensor::up_proj),    v(layer_tensor::down_proj)};
}

}  // namespace

megakernel_tensors megakernel_tensors_from(const checkpoint& c) {
    const auto& cfg = c.config();
    megakernel_tensors t{};
    t.talker = cfg.talker;
    t.code_predictor = cfg.code_predictor;
    for (int i = 0; i < cfg.talker.body.layers; ++i) t.talker_layers.push_back(layer(c, tn::talker_layer, i));
    for (int i = 0; i < cfg.code_predictor.body.layers; ++i) t.cp_layers.push_back(layer(c, tn::cp_layer, i));
    t.text_embedding = bf16_view(c, tn::text_embedding);
    t.text_fc1 = bf16_view(c, tn::text_fc1_weight);
    t.text_fc1_bias = bf16_view(c, tn::text_fc1_bias);
    t.text_fc2 = bf16_view(c, tn::text_fc2_weight);
    t.text_fc2_bias = bf16_view(c, tn::text_fc2_bias);
    t.codec_embedding = bf16_view(c, tn::codec_embedding);
    t.talker_norm = bf16_view(c, tn::talker_norm);
    t.codec_head = bf16_view(c, tn::codec_head);
    t.cp_norm = bf16_view(c, tn::cp_norm);
    for (int j = 0; j < cfg.code_predictor.steps(); ++j) {
        t.cp_embeddings.push_back(bf16_view(c, tn::cp_codec_embedding(j)));
        t.cp_heads.push_back(bf16_view(c, tn::cp_lm_head(j)));
    }
    if (cfg.code_predictor.has_projection) {
        t.cp_projection = bf16_view(c, tn::cp_projection_weight);
        t.cp_projection_bias = bf16_view(c, tn::cp_projection_bias);
    }
    return t;
}

megakernel_policy megakernel_policy_from(const model_config& config) {
    // The same numbers make_generation_options() hands the reference sampler.
    return {.eos = config.codec_ids.eos,
            .suppress_begin = config.code_predictor.vocab,
            .suppress_end = config.talker.codec_vocab,
            .min_new_tokens = 2};
}

}  // namespace megatts

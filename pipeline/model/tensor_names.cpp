#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace tensor_names {
namespace {

const char* layer_suffix(layer_tensor t) {
    switch (t) {
    case layer_tensor::input_norm: return "input_layernorm.weight";
    case layer_tensor::q_proj: return "self_attn.q_proj.weight";
    case layer_tensor::k_proj: return "self_attn.k_proj.weight";
    case layer_tensor::v_proj: return "self_attn.v_proj.weight";
    case layer_tensor::o_proj: return "self_attn.o_proj.weight";
    case layer_tensor::q_norm: return "self_attn.q_norm.weight";
    case layer_tensor::k_norm: return "self_attn.k_norm.weight";
    case layer_tensor::post_norm: return "post_attention_layernorm.weight";
    case layer_tensor::gate_proj: return "mlp.gate_proj.weight";
    case layer_tensor::up_proj: return "mlp.up_proj.weight";
    case layer_tensor::down_proj: return "mlp.down_proj.weight";
    }
    return "";
}

std::string n(int i) { return std::to_string(i); }

}  // namespace

std::string talker_layer(int layer, layer_tensor t) {
    return "talker.model.layers." + n(layer) + "." + layer_suffix(t);
}
std::string cp_layer(int layer, layer_tensor t) {
    return "talker.code_predictor.model.layers." + n(layer) + "." + layer_suffix(t);
}
std::string cp_codec_embedding(int j) { return "talker.code_predictor.model.codec_embedding." + n(j) + ".weight"; }
std::string cp_lm_head(int j) { return "talker.code_predictor.lm_head." + n(j) + ".weight"; }

namespace {
std::string codebook(int q) {
    return q == 0 ? "decoder.quantizer.rvq_first.vq.layers.0._codebook."
                  : "decoder.quantizer.rvq_rest.vq.layers." + n(q - 1) + "._codebook.";
}
const char* rvq(bool first) { return first ? "decoder.quantizer.rvq_first." : "decoder.quantizer.rvq_rest."; }
}  // namespace

std::string voc_codebook_usage(int q) { return codebook(q) + "cluster_usage"; }
std::string voc_codebook_sum(int q) { return codebook(q) + "embedding_sum"; }
std::string voc_rvq_output_proj(bool first) { return std::string(rvq(first)) + "output_proj.weight"; }
std::string voc_rvq_input_proj(bool first) { return std::string(rvq(first)) + "input_proj.weight"; }
std::string voc_pt_layer(int layer, layer_tensor t) {
    return "decoder.pre_transformer.layers." + n(layer) + "." + layer_suffix(t);
}
std::string voc_pt_attn_scale(int layer) {
    return "decoder.pre_transformer.layers." + n(layer) + ".self_attn_layer_scale.scale";
}
std::string voc_pt_mlp_scale(int layer) {
    return "decoder.pre_transformer.layers." + n(layer) + ".mlp_layer_scale.scale";
}

std::string voc_upsample(int k, convnext_tensor t) {
    const std::string p = "decoder.upsample." + n(k) + ".";
    switch (t) {
    case convnext_tensor::up_weight: return p + "0.conv.weight";
    case convnext_tensor::up_bias: return p + "0.conv.bias";
    case convnext_tensor::dw_weight: return p + "1.dwconv.conv.weight";
    case convnext_tensor::dw_bias: return p + "1.dwconv.conv.bias";
    case convnext_tensor::norm_weight: return p + "1.norm.weight";
    case convnext_tensor::norm_bias: return p + "1.norm.bias";
    case convnext_tensor::pw1_weight: return p + "1.pwconv1.weight";
    case convnext_tensor::pw1_bias: return p + "1.pwconv1.bias";
    case convnext_tensor::pw2_weight: return p + "1.pwconv2.weight";
    case convnext_tensor::pw2_bias: return p + "1.pwconv2.bias";
    case convnext_tensor::gamma: return p + "1.gamma";
    }
    return p;
}

std::string voc_block_snake(int b, bool beta) {
    return "decoder.decoder." + n(b) + ".block.0." + (beta ? "beta" : "alpha");
}
std::string voc_block_up(int b, bool bias) {
    return "decoder.decoder." + n(b) + ".block.1.conv." + (bias ? "bias" : "weight");
}
std::string voc_block_residual(int b, int unit, residual_tensor t) {
    const std::string p = "decoder.decoder." + n(b) + ".block." + n(unit + 2) + ".";
    switch (t) {
    case residual_tensor::act1_alpha: return p + "act1.alpha";
    case residual_tensor::act1_beta: return p + "act1.beta";
    case residual_tensor::conv1_weight: return p + "conv1.conv.weight";
    case residual_tensor::conv1_bias: return p + "conv1.conv.bias";
    case residual_tensor::act2_alpha: return p + "act2.alpha";
    case residual_tensor::act2_beta: return p + "act2.beta";
    case residual_tensor::conv2_weight: return p + "conv2.conv.weight";
    case residual_tensor::conv2_bias: return p + "conv2.conv.bias";
    }
    return p;
}

}  // namespace tensor_names

namespace {

using shape = std::vector<std::int64_t>;

void add_decoder_layer(std::vector<tensor_spec>& out, const transformer_dims& d,
                       std::string (*name)(int, layer_tensor), int layer, bool qk_norm, dtype type) {
    auto add = [&](layer_tensor t, shape s) { out.push_back({name(layer, t), std::move(s), type}); };
    add(layer_tensor::input_norm, {d.hidden});
    add(layer_tensor::q_proj, {d.q_width(), d.hidden});
    add(layer_tensor::k_proj, {d.kv_width(), d.hidden});
    add(layer_tensor::v_proj, {d.kv_width(), d.hidden});
    add(layer_tensor::o_proj, {d.hidden, d.q_width()});
    if (qk_norm) {
        add(layer_tensor::q_norm, {d.head_dim});
        add(layer_tensor::k_norm, {d.head_dim});
    }
    add(layer_tensor::post_norm, {d.hidden});
    add(layer_tensor::gate_proj, {d.intermediate, d.hidden});
    add(layer_tensor::up_proj, {d.intermediate, d.hidden});
    add(layer_tensor::down_proj, {d.hidden, d.intermediate});
}

}  // namespace

std::vector<tensor_spec> model_tensor_specs(const model_config& c) {
    namespace tn = tensor_names;
    const auto& t = c.talker;
    const auto& p = c.code_predictor;
    const int h = t.body.hidden;
    std::vector<tensor_spec> out{
        {tn::text_embedding, {t.text_vocab, t.text_hidden}},
        {tn::text_fc1_weight, {t.text_hidden, t.text_hidden}},
        {tn::text_fc1_bias, {t.text_hidden}},
        {tn::text_fc2_weight, {h, t.text_hidden}},
        {tn::text_fc2_bias, {h}},
        {tn::codec_embedding, {t.codec_vocab, h}},
        {tn::talker_norm, {h}},
        {tn::codec_head, {t.codec_vocab, h}},
        {tn::cp_norm, {p.body.hidden}},
    };
    for (int i = 0; i < t.body.layers; ++i)
        add_decoder_layer(out, t.body, tn::talker_layer, i, true, dtype::bf16);
    for (int i = 0; i < p.body.layers; ++i)
        add_decoder_layer(out, p.body, tn::cp_layer, i, true, dtype::bf16);
    for (int j = 0; j < p.steps(); ++j) {
        out.push_back({tn::cp_codec_embedding(j), {p.vocab, p.embed_width}});
        out.push_back({tn::cp_lm_head(j), {p.vocab, p.body.hidden}});
    }
    if (p.has_projection) {
        out.push_back({tn::cp_projection_weight, {p.body.hidden, p.embed_width}});
        out.push_back({tn::cp_projection_bias, {p.body.hidden}});
    }
    return out;
}

int vocoder_block_channels(const vocoder_dims& v, int b) { return v.decoder_dim >> (b - 1); }

std::vector<tensor_spec> vocoder_tensor_specs(const model_config& c) {
    namespace tn = tensor_names;
    const auto& v = c.vocoder;
    const std::int64_t cd = v.codebook_dim, half = v.codebook_vector_dim(), lat = v.latent_dim;
    const auto& pt = v.transformer;
    std::vector<tensor_spec> out;
    auto add = [&](std::string name, shape s) { out.push_back({std::move(name), std::move(s), dtype::f32}); };

    for (bool first : {true, false}) {
        add(tn::voc_rvq_input_proj(first), {half, cd, 1});
        add(tn::voc_rvq_output_proj(first), {cd, half, 1});
    }
    for (int q = 0; q < v.num_quantizers; ++q) {
        add(tn::voc_codebook_usage(q), {v.codebook_size});
        add(tn::voc_codebook_sum(q), {v.codebook_size, half});
    }
    add(tn::voc_pre_conv_weight, {lat, cd, 3});
    add(tn::voc_pre_conv_bias, {lat});
    add(tn::voc_pt_input_proj_weight, {pt.hidden, lat});
    add(tn::voc_pt_input_proj_bias, {pt.hidden});
    for (int i = 0; i < pt.layers; ++i) {
        add_decoder_layer(out, pt, tn::voc_pt_layer, i, false, dtype::f32);
        add(tn::voc_pt_attn_scale(i), {pt.hidden});
        add(tn::voc_pt_mlp_scale(i), {pt.hidden});
    }
    add(tn::voc_pt_norm, {pt.hidden});
    add(tn::voc_pt_output_proj_weight, {lat, pt.hidden});
    add(tn::voc_pt_output_proj_bias, {lat});
    for (int k = 0; k < 2; ++k) {
        using ct = convnext_tensor;
        add(tn::voc_upsample(k, ct::up_weight), {lat, lat, v.upsampling_ratios[k]});
        add(tn::voc_upsample(k, ct::up_bias), {lat});
        add(tn::voc_upsample(k, ct::dw_weight), {lat, 1, 7});
        add(tn::voc_upsample(k, ct::dw_bias), {lat});
        add(tn::voc_upsample(k, ct::norm_weight), {lat});
        add(tn::voc_upsample(k, ct::norm_bias), {lat});
        add(tn::voc_upsample(k, ct::pw1_weight), {4 * lat, lat});
        add(tn::voc_upsample(k, ct::pw1_bias), {4 * lat});
        add(tn::voc_upsample(k, ct::pw2_weight), {lat, 4 * lat});
        add(tn::voc_upsample(k, ct::pw2_bias), {lat});
        add(tn::voc_upsample(k, ct::gamma), {lat});
    }
    add(tn::voc_decoder0_weight, {v.decoder_dim, lat, 7});
    add(tn::voc_decoder0_bias, {v.decoder_dim});
    for (int b = 1; b <= 4; ++b) {
        const std::int64_t cin = vocoder_block_channels(v, b), cout = vocoder_block_channels(v, b + 1);
        const int r = v.upsample_rates[b - 1];
        add(tn::voc_block_snake(b, false), {cin});
        add(tn::voc_block_snake(b, true), {cin});
        add(tn::voc_block_up(b, false), {cin, cout, 2 * r});
        add(tn::voc_block_up(b, true), {cout});
        for (int u = 0; u < 3; ++u) {
            using rt = residual_tensor;
            add(tn::voc_block_residual(b, u, rt::act1_alpha), {cout});
            add(tn::voc_block_residual(b, u, rt::act1_beta), {cout});
            add(tn::voc_block_residual(b, u, rt::conv1_weight), {cout, cout, 7});
            add(tn::voc_block_residual(b, u, rt::conv1_bias), {cout});
            add(tn::voc_block_residual(b, u, rt::act2_alpha), {cout});
            add(tn::voc_block_residual(b, u, rt::act2_beta), {cout});
            add(tn::voc_block_residual(b, u, rt::conv2_weight), {cout, cout, 1});
            add(tn::voc_block_residual(b, u, rt::conv2_bias), {cout});
        }
    }
    const std::int64_t last = vocoder_block_channels(v, 5);
    add(tn::voc_final_snake_alpha, {last});
    add(tn::voc_final_snake_beta, {last});
    add(tn::voc_final_conv_weight, {1, last, 7});
    add(tn::voc_final_conv_bias, {1});
    return out;
}

}  // namespace megatts

#include "pipeline/model/vocoder_loader.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace {

namespace tn = tensor_names;

// Reads decoder tensors as f32 and builds the reference layouts from them. It keeps
// the first failure instead of returning it, so the loader below reads as a list of
// tensors; a failed read yields zeros of the tensor's size, which the caller then
// discards by returning the error.
class tensor_reader {
public:
    explicit tensor_reader(const checkpoint& c) : c_(c) {}

    const std::optional<error>& first_error() const { return error_; }

    std::vector<float> values(const std::string& name) {
        const auto& t = c_.vocoder_tensor(name);
        auto v = to_f32(t);
        if (v) return std::move(v.value());
        if (!error_) error_ = v.err();
        return std::vector<float>(static_cast<std::size_t>(t.numel()));
    }

    int dim(const std::string& name, std::size_t axis) const {
        return static_cast<int>(c_.vocoder_tensor(name).shape[axis]);
    }

    // Conv1d [out, in, taps] or Linear [out, in].
    ref::dense_weights dense(const std::string& weight, const std::string& bias) {
        return dense_with(weight, values(bias));
    }
    ref::dense_weights dense(const std::string& weight) { return dense_with(weight, {}); }

    // ConvTranspose1d [in, out, kernel].
    ref::transposed_conv_weights transposed(const std::string& weight, const std::string& bias, int stride) {
        return ref::transposed_conv_from_conv(values(weight), values(bias), dim(weight, 0), dim(weight, 1),
                                              dim(weight, 2), stride);
    }

    ref::snake_weights snake(const std::string& alpha, const std::string& beta) {
        return ref::snake_from_log(values(alpha), values(beta));
    }

private:
    ref::dense_weights dense_with(const std::string& weight, const std::vector<float>& bias) {
        const auto& shape = c_.vocoder_tensor(weight).shape;
        const int taps = shape.size() == 3 ? static_cast<int>(shape[2]) : 1;
        return ref::dense_from_conv(values(weight), bias, dim(weight, 0), dim(weight, 1), taps);
    }

    const checkpoint& c_;
    std::optional<error> error_;
};

ref::pre_transformer_weights pre_transformer(tensor_reader& r, const vocoder_dims& v) {
    ref::pre_transformer_weights w;
    w.input_proj = r.dense(tn::voc_pt_input_proj_weight, tn::voc_pt_input_proj_bias);
    for (int i = 0; i < v.transformer.layers; ++i) {
        auto name = [i](layer_tensor t) { return tn::voc_pt_layer(i, t); };
        ref::pre_transformer_layer_weights l;
        l.input_norm = r.values(name(layer_tensor::input_norm));
        l.q = r.dense(name(layer_tensor::q_proj));
        l.k = r.dense(name(layer_tensor::k_proj));
        l.v = r.dense(name(layer_tensor::v_proj));
        l.o = r.dense(name(layer_tensor::o_proj));
        l.attn_scale = r.values(tn::voc_pt_attn_scale(i));
        l.post_norm = r.values(name(layer_tensor::post_norm));
        l.gate = r.dense(name(layer_tensor::gate_proj));
        l.up = r.dense(name(layer_tensor::up_proj));
        l.down = r.dense(name(layer_tensor::down_proj));
        l.mlp_scale = r.values(tn::voc_pt_mlp_scale(i));
        w.layers.push_back(std::move(l));
    }
    w.norm = r.values(tn::voc_pt_norm);
    w.output_proj = r.dense(tn::voc_pt_output_proj_weight, tn::voc_pt_output_proj_bias);
    return w;
}

ref::upsampler_weights upsampler(tensor_reader& r, int k, int ratio) {
    using ct = convnext_tensor;
    auto name = [k](ct t) { return tn::voc_upsample(k, t); };
    ref::upsampler_weights w;
    w.up = r.transposed(name(ct::up_weight), name(ct::up_bias), ratio);
    const std::string dw = name(ct::dw_weight);
    w.dw_weight = ref::depthwise_from_conv(r.values(dw), r.dim(dw, 0), r.dim(dw, 2));
    w.dw_bias = r.values(name(ct::dw_bias));
    w.norm_weight = r.values(name(ct::norm_weight));
    w.norm_bias = r.values(name(ct::norm_bias));
    w.pw1 = r.dense(name(ct::pw1_weight), name(ct::pw1_bias));
    w.pw2 = r.dense(name(ct::pw2_weight), name(ct::pw2_bias));
    w.gamma = r.values(name(ct::gamma));
    return w;
}

ref::decoder_block_weights decoder_block(tensor_reader& r, int b, int rate) {
    ref::decoder_block_weights w;
    w.snake = r.snake(tn::voc_block_snake(b, false), tn::voc_block_snake(b, true));
    w.up = r.transposed(tn::voc_block_up(b, false), tn::voc_block_up(b, true), rate);
    for (int u = 0; u < static_cast<int>(w.units.size()); ++u) {
        using rt = residual_tensor;
        auto name = [b, u](rt t) { return tn::voc_block_residual(b, u, t); };
        auto& unit = w.units[u];
        unit.act1 = r.snake(name(rt::act1_alpha), name(rt::act1_beta));
        unit.conv1 = r.dense(name(rt::conv1_weight), name(rt::conv1_bias));
        unit.act2 = r.snake(name(rt::act2_alpha), name(rt::act2_beta));
        unit.conv2 = r.dense(name(rt::conv2_weight), name(rt::conv2_bias));
    }
    return w;
}

}  // namespace

result<ref::vocoder_weights> load_vocoder_weights(const checkpoint& c) {
    const auto& v = c.config().vocoder;
    tensor_reader r(c);
    ref::vocoder_weights w;
    w.dims = v;
    for (int q = 0; q < v.num_quantizers; ++q)
        ref::append_codebook(r.values(tn::voc_codebook_sum(q)), r.values(tn::voc_codebook_usage(q)),
                             v.codebook_vector_dim(), w.codebooks);
    w.dequant_proj = ref::dense_concat_inputs(r.dense(tn::voc_rvq_output_proj(true)),
                                              r.dense(tn::voc_rvq_output_proj(false)));
    w.pre_conv = r.dense(tn::voc_pre_conv_weight, tn::voc_pre_conv_bias);
    w.pre_transformer = pre_transformer(r, v);
    for (int k = 0; k < static_cast<int>(w.upsamplers.size()); ++k)
        w.upsamplers[k] = upsampler(r, k, v.upsampling_ratios[k]);
    w.decoder0 = r.dense(tn::voc_decoder0_weight, tn::voc_decoder0_bias);
    for (int b = 1; b <= static_cast<int>(w.blocks.size()); ++b)
        w.blocks[b - 1] = decoder_block(r, b, v.upsample_rates[b - 1]);
    w.final_snake = r.snake(tn::voc_final_snake_alpha, tn::voc_final_snake_beta);
    w.final_conv = r.dense(tn::voc_final_conv_weight, tn::voc_final_conv_bias);
    if (r.first_error()) return *r.first_error();
    return w;
}

}  // namespace megatts

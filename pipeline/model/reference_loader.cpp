#include "pipeline/model/reference_loader.h"

#include "pipeline/model/tensor_names.h"

namespace megatts {
namespace {

namespace tn = tensor_names;

// The table guarantees a floating-point dtype, so to_f32 cannot fail here.
std::vector<float> vec(const checkpoint& c, const std::string& name) { return *to_f32(c.tensor(name)); }

ref::matrix mat(const checkpoint& c, const std::string& name) {
    const auto& t = c.tensor(name);
    return {*to_f32(t), static_cast<int>(t.shape[0]), static_cast<int>(t.shape[1])};
}

ref::decoder_layer_weights layer(const checkpoint& c, std::string (*name)(int, layer_tensor), int i) {
    ref::decoder_layer_weights w;
    w.input_norm = vec(c, name(i, layer_tensor::input_norm));
    w.q = mat(c, name(i, layer_tensor::q_proj));
    w.k = mat(c, name(i, layer_tensor::k_proj));
    w.v = mat(c, name(i, layer_tensor::v_proj));
    w.o = mat(c, name(i, layer_tensor::o_proj));
    w.q_norm = vec(c, name(i, layer_tensor::q_norm));
    w.k_norm = vec(c, name(i, layer_tensor::k_norm));
    w.post_norm = vec(c, name(i, layer_tensor::post_norm));
    w.gate = mat(c, name(i, layer_tensor::gate_proj));
    w.up = mat(c, name(i, layer_tensor::up_proj));
    w.down = mat(c, name(i, layer_tensor::down_proj));
    return w;
}

}  // namespace

ref::talker_weights load_talker_weights(const checkpoint& c) {
    ref::talker_weights w;
    w.dims = c.config().talker;
    w.text_embedding = mat(c, tn::text_embedding);
    w.text_fc1 = mat(c, tn::text_fc1_weight);
    w.text_fc1_bias = vec(c, tn::text_fc1_bias);
    w.text_fc2 = mat(c, tn::text_fc2_weight);
    w.text_fc2_bias = vec(c, tn::text_fc2_bias);
    w.codec_embedding = mat(c, tn::codec_embedding);
    for (int i = 0; i < w.dims.body.layers; ++i) w.layers.push_back(layer(c, tn::talker_layer, i));
    w.norm = vec(c, tn::talker_norm);
    w.codec_head = mat(c, tn::codec_head);
    return w;
}

ref::code_predictor_weights load_code_predictor_weights(const checkpoint& c) {
    ref::code_predictor_weights w;
    w.dims = c.config().code_predictor;
    for (int i = 0; i < w.dims.body.layers; ++i) w.layers.push_back(layer(c, tn::cp_layer, i));
    w.norm = vec(c, tn::cp_norm);
    for (int j = 0; j < w.dims.steps(); ++j) {
        w.codec_embedding.push_back(mat(c, tn::cp_codec_embedding(j)));
        w.lm_head.push_back(mat(c, tn::cp_lm_head(j)));
    }
    if (w.dims.has_projection) {
        w.projection = mat(c, tn::cp_projection_weight);
        w.projection_bias = vec(c, tn::cp_projection_bias);
    }
    return w;
}

}  // namespace megatts

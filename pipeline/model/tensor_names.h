// tensor_names: the one place where checkpoint tensor names are spelled, and the
// table of every tensor a checkpoint must hold (name, shape, dtype), derived from
// its config.
//
// Contract: pure functions of their arguments. The loaders, make-checkpoint and
// the golden diff tools all build names through these functions, so a name typo
// cannot hide in one of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/model/dtype.h"
#include "pipeline/model/model_config.h"

namespace megatts {

struct tensor_spec {
    std::string name;
    std::vector<std::int64_t> shape;
    dtype type = dtype::bf16;
};

// The tensors of one Qwen3 decoder layer, talker and code predictor alike.
enum class layer_tensor {
    input_norm, q_proj, k_proj, v_proj, o_proj, q_norm, k_norm,
    post_norm, gate_proj, up_proj, down_proj,
};

// Vocoder upsampler k (0, 1): a ConvTranspose then a ConvNeXt block.
enum class convnext_tensor {
    up_weight, up_bias, dw_weight, dw_bias, norm_weight, norm_bias,
    pw1_weight, pw1_bias, pw2_weight, pw2_bias, gamma,
};

// A vocoder residual unit: SnakeBeta, dilated conv k7, SnakeBeta, conv k1.
enum class residual_tensor {
    act1_alpha, act1_beta, conv1_weight, conv1_bias, act2_alpha, act2_beta, conv2_weight, conv2_bias,
};

namespace tensor_names {

// model.safetensors (BF16)
inline constexpr const char* text_embedding = "talker.model.text_embedding.weight";
inline constexpr const char* text_fc1_weight = "talker.text_projection.linear_fc1.weight";
inline constexpr const char* text_fc1_bias = "talker.text_projection.linear_fc1.bias";
inline constexpr const char* text_fc2_weight = "talker.text_projection.linear_fc2.weight";
inline constexpr const char* text_fc2_bias = "talker.text_projection.linear_fc2.bias";
inline constexpr const char* codec_embedding = "talker.model.codec_embedding.weight";
inline constexpr const char* talker_norm = "talker.model.norm.weight";
inline constexpr const char* codec_head = "talker.codec_head.weight";
inline constexpr const char* cp_norm = "talker.code_predictor.model.norm.weight";
inline constexpr const char* cp_projection_weight = "talker.code_predictor.small_to_mtp_projection.weight";
inline constexpr const char* cp_projection_bias = "talker.code_predictor.small_to_mtp_projection.bias";

std::string talker_layer(int layer, layer_tensor t);
std::string cp_layer(int layer, layer_tensor t);
std::string cp_codec_embedding(int j);  // embeds codebook j + 1
std::string cp_lm_head(int j);          // predicts codebook j + 1

// Prefixes of tensors a checkpoint may carry that megatts does not use (yet):
// the Base model's speaker encoder, the speech tokenizer's Mimi encoder.
inline constexpr const char* ignored_model_prefix = "speaker_encoder.";
inline constexpr const char* ignored_vocoder_prefix = "encoder.";

// speech_tokenizer/model.safetensors (F32), decoder only.
std::string voc_codebook_usage(int q);      // q = 0: semantic (rvq_first); 1..: rvq_rest
std::string voc_codebook_sum(int q);
std::string voc_rvq_output_proj(bool first);
std::string voc_rvq_input_proj(bool first);
inline constexpr const char* voc_pre_conv_weight = "decoder.pre_conv.conv.weight";
inline constexpr const char* voc_pre_conv_bias = "decoder.pre_conv.conv.bias";
inline constexpr const char* voc_pt_input_proj_weight = "decoder.pre_transformer.input_proj.weight";
inline constexpr const char* voc_pt_input_proj_bias = "decoder.pre_transformer.input_proj.bias";
inline constexpr const char* voc_pt_output_proj_weight = "decoder.pre_transformer.output_proj.weight";
inline constexpr const char* voc_pt_output_proj_bias = "decoder.pre_transformer.output_proj.bias";
inline constexpr const char* voc_pt_norm = "decoder.pre_transformer.norm.weight";
std::string voc_pt_layer(int layer, layer_tensor t);  // no q_norm / k_norm in the vocoder
std::string voc_pt_attn_scale(int layer);
std::string voc_pt_mlp_scale(int layer);
// Upsampler k (0, 1): ConvTranspose then a ConvNeXt block.
std::string voc_upsample(int k, convnext_tensor t);
inline constexpr const char* voc_decoder0_weight = "decoder.decoder.0.conv.weight";
inline constexpr const char* voc_decoder0_bias = "decoder.decoder.0.conv.bias";
// Decoder block b (1..4): SnakeBeta, ConvTranspose, residual units 0..2 (dilation 1, 3, 9).
std::string voc_block_snake(int b, bool beta);
std::string voc_block_up(int b, bool bias);
std::string voc_block_residual(int b, int unit, residual_tensor t);
inline constexpr const char* voc_final_snake_alpha = "decoder.decoder.5.alpha";
inline constexpr const char* voc_final_snake_beta = "decoder.decoder.5.beta";
inline constexpr const char* voc_final_conv_weight = "decoder.decoder.6.conv.weight";
inline constexpr const char* voc_final_conv_bias = "decoder.decoder.6.conv.bias";

}  // namespace tensor_names

// Every tensor of model.safetensors (talker, text projection, code predictor).
std::vector<tensor_spec> model_tensor_specs(const model_config& config);

// Every tensor of speech_tokenizer/model.safetensors that the decoder reads.
std::vector<tensor_spec> vocoder_tensor_specs(const model_config& config);

// Channel count entering decoder block b (1..4); block b outputs decoder_channels(b + 1).
int vocoder_block_channels(const vocoder_dims& v, int b);

}  // namespace megatts

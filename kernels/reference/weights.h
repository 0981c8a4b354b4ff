// Reference weights: the talker, code-predictor and decoder-layer parameters as f32
// arrays (bf16 checkpoint values upcast exactly), filled by pipeline/model's loader.
//
// Contract: plain data. Matrices are row-major [rows, cols] as in PyTorch Linear
// ([out, in]). Read-only once loaded; share freely between threads.
#pragma once

#include <vector>

#include "kernels/common/model_dims.h"

namespace megatts::ref {

struct matrix {
    std::vector<float> data;
    int rows = 0;
    int cols = 0;

    const float* row(int r) const { return data.data() + static_cast<long>(r) * cols; }
};

struct decoder_layer_weights {
    std::vector<float> input_norm;
    matrix q, k, v, o;
    std::vector<float> q_norm, k_norm;  // per head_dim; empty when the stack has no QK-norm
    std::vector<float> post_norm;
    matrix gate, up, down;
};

struct talker_weights {
    talker_dims dims;
    matrix text_embedding;  // [text_vocab, text_hidden]
    matrix text_fc1;        // [text_hidden, text_hidden] (+ bias)
    std::vector<float> text_fc1_bias;
    matrix text_fc2;        // [hidden, text_hidden] (+ bias)
    std::vector<float> text_fc2_bias;
    matrix codec_embedding; // [codec_vocab, hidden]
    std::vector<decoder_layer_weights> layers;
    std::vector<float> norm;
    matrix codec_head;      // [codec_vocab, hidden]
};

struct code_predictor_weights {
    code_predictor_dims dims;
    std::vector<decoder_layer_weights> layers;
    std::vector<float> norm;
    std::vector<matrix> codec_embedding;  // steps() tables [vocab, embed_width]; [j] embeds codebook j+1
    std::vector<matrix> lm_head;          // steps() heads [vocab, hidden]; [j] predicts codebook j+1
    matrix projection;                    // small_to_mtp_projection [hidden, embed_width]; empty on 0.6B
    std::vector<float> projection_bias;
};

}  // namespace megatts::ref

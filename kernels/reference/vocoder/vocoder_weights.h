// vocoder_weights: the speech-tokenizer decoder's parameters in the layouts the fp32
// reference decoder reads, and the functions that build them from the checkpoint's
// PyTorch layouts.
//
// Contract: plain data, read-only once built; share freely between threads (any
// number of vocoder_stream objects may read one set). The *_from_* builders are pure
// functions; their spans must hold exactly the element counts the named PyTorch
// shapes give (the loader passes tensors the checkpoint has validated); they do not
// check and report no errors.
//
// Why these layouts: every conv and linear of the decoder runs through dense_rows,
// which sweeps many output channels per input value, so weights are stored
// input-major ([taps][in][out]) rather than PyTorch's [out][in][taps]. Values that
// PyTorch recomputes every call (codebook vectors, exp of SnakeBeta's log
// parameters) are computed once here.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/model_dims.h"

namespace megatts::ref {

// A causal conv (taps > 1) or a linear map / 1x1 conv (taps == 1):
// y[t][o] = bias[o] + sum_{k, c} weight[(k * in + c) * out + o] * x[t - (taps - 1 - k) * dilation][c].
struct dense_weights {
    int taps = 1;
    int in = 0;
    int out = 0;
    std::vector<float> weight;  // [taps][in][out]
    std::vector<float> bias;    // [out]; empty when the layer has none
    // Significant bits each operand of the layer's products is rounded to (nearest, ties
    // away from zero, as cvt.rna.tf32 does) before it is multiplied: 24, f32 as published,
    // is the model; fewer (TF32: 11) model a reduced-precision tensor-core product, for
    // studies of which layers tolerate one (tests/kernels/vocoder/vocoder_precision.cpp). Sums stay f32.
    int operand_bits = 24;
};

// A causal ConvTranspose1d whose kernel is a multiple of its stride s, with the right
// kernel - s outputs trimmed. Input row t then yields output rows t*s .. t*s + s - 1,
// each a function of input rows t - taps + 1 .. t only: a causal conv with
// taps = kernel / s whose s*out output channels are s consecutive output rows.
struct transposed_conv_weights {
    int stride = 0;
    dense_weights phases;  // out = stride * output channels, ordered [phase][channel]

    int channels_out() const { return phases.out / stride; }
};

// SnakeBeta x + inv_beta * sin(alpha * x)^2, per channel.
struct snake_weights {
    std::vector<float> alpha;     // exp(log alpha)
    std::vector<float> inv_beta;  // 1 / (exp(log beta) + 1e-9)
};

struct pre_transformer_layer_weights {
    std::vector<float> input_norm;
    dense_weights q, k, v, o;
    std::vector<float> attn_scale;
    std::vector<float> post_norm;
    dense_weights gate, up, down;
    std::vector<float> mlp_scale;
};

struct pre_transformer_weights {
    dense_weights input_proj;
    std::vector<pre_transformer_layer_weights> layers;
    std::vector<float> norm;
    dense_weights output_proj;
};

// upsample.k: ConvTranspose(kernel = stride = ratio), then a ConvNeXt block.
struct upsampler_weights {
    transposed_conv_weights up;
    std::vector<float> dw_weight;  // depthwise causal conv, [taps][channels]
    std::vector<float> dw_bias;
    std::vector<float> norm_weight, norm_bias;
    dense_weights pw1, pw2;
    std::vector<float> gamma;
};

struct residual_unit_weights {
    snake_weights act1;
    dense_weights conv1;
    snake_weights act2;
    dense_weights conv2;
};

// decoder.b (b = 1..4): SnakeBeta, ConvTranspose(2r, r), residual units with dilation 1, 3, 9.
struct decoder_block_weights {
    snake_weights snake;
    transposed_conv_weights up;
    std::array<residual_unit_weights, 3> units;
};

struct vocoder_weights {
    vocoder_dims dims;
    // Codebook vectors of quantizer q at [q][code][dims.codebook_vector_dim()].
    std::vector<float> codebooks;
    // rvq_first.output_proj and rvq_rest.output_proj as one linear map over the
    // concatenation [codebook-0 vector, sum of the other codebook vectors].
    dense_weights dequant_proj;
    dense_weights pre_conv;
    pre_transformer_weights pre_transformer;
    std::array<upsampler_weights, 2> upsamplers;
    dense_weights decoder0;
    std::array<decoder_block_weights, 4> blocks;
    snake_weights final_snake;
    dense_weights final_conv;
};

// Calls f(name, layer) for every dense layer of w (a vocoder_weights, const or not), in
// decoding order, named by their place in the decoder (these names, not the
// checkpoint's tensors'): "dequant_proj", "pre_conv",
// "pre_transformer.input_proj", "pre_transformer.layers.L.{q,k,v,o,gate,up,down}",
// "pre_transformer.output_proj", "upsample.U.{up,pw1,pw2}", "decoder0",
// "decoder.B.up", "decoder.B.units.U.{conv1,conv2}" (B = 1..4, U = 0..2), "final_conv".
template <class Weights, class F>
void for_each_dense(Weights& w, F&& f) {
    f(std::string("dequant_proj"), w.dequant_proj);
    f(std::string("pre_conv"), w.pre_conv);
    auto& t = w.pre_transformer;
    f(std::string("pre_transformer.input_proj"), t.input_proj);
    for (std::size_t l = 0; l < t.layers.size(); ++l) {
        const std::string p = "pre_transformer.layers." + std::to_string(l) + ".";
        auto& L = t.layers[l];
        f(p + "q", L.q);
        f(p + "k", L.k);
        f(p + "v", L.v);
        f(p + "o", L.o);
        f(p + "gate", L.gate);
        f(p + "up", L.up);
        f(p + "down", L.down);
    }
    f(std::string("pre_transformer.output_proj"), t.output_proj);
    for (std::size_t u = 0; u < w.upsamplers.size(); ++u) {
        const std::string p = "upsample." + std::to_string(u) + ".";
        f(p + "up", w.upsamplers[u].up.phases);
        f(p + "pw1", w.upsamplers[u].pw1);
        f(p + "pw2", w.upsamplers[u].pw2);
    }
    f(std::string("decoder0"), w.decoder0);
    for (std::size_t b = 0; b < w.blocks.size(); ++b) {
        const std::string p = "decoder." + std::to_string(b + 1) + ".";
        f(p + "up", w.blocks[b].up.phases);
        for (std::size_t u = 0; u < w.blocks[b].units.size(); ++u) {
            f(p + "units." + std::to_string(u) + ".conv1", w.blocks[b].units[u].conv1);
            f(p + "units." + std::to_string(u) + ".conv2", w.blocks[b].units[u].conv2);
        }
    }
    f(std::string("final_conv"), w.final_conv);
}

// Conv1d weight [out][in][taps] (a Linear [out][in] is taps = 1); bias may be empty.
dense_weights dense_from_conv(std::span<const float> weight, std::span<const float> bias, int out, int in,
                              int taps);

// One linear map over [x_a, x_b] that computes a(x_a) + b(x_b); a and b have the same out, no taps.
dense_weights dense_concat_inputs(const dense_weights& a, const dense_weights& b);

// ConvTranspose1d weight [in][out][kernel] with bias [out]; kernel must be a multiple of stride.
transposed_conv_weights transposed_conv_from_conv(std::span<const float> weight, std::span<const float> bias,
                                                  int in, int out, int kernel, int stride);

// Depthwise Conv1d weight [channels][1][taps] -> [taps][channels].
std::vector<float> depthwise_from_conv(std::span<const float> weight, int channels, int taps);

// SnakeBeta from its stored log-parameters.
snake_weights snake_from_log(std::span<const float> log_alpha, std::span<const float> log_beta);

// Appends one codebook's vectors: embedding_sum [size][dim] / max(cluster_usage [size], 1e-5).
void append_codebook(std::span<const float> embedding_sum, std::span<const float> cluster_usage, int dim,
                     std::vector<float>& codebooks);

}  // namespace megatts::ref

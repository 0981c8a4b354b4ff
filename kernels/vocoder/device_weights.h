// device_weights: the speech-tokenizer decoder's f32 weights on the GPU, in the
// layouts the vocoder kernels read, uploaded once from the reference's
// ref::vocoder_weights (pipeline/model/vocoder_loader builds those from a checkpoint).
//
// Contract: upload_weights() copies every tensor to its own device allocation, owned
// by the returned object (freed with it); the host weights may be dropped afterwards.
// Values are the published f32 weights; what changes is layout: every conv, linear
// map and transposed conv becomes a zero-padded [K][N] gemm_matrix (K = taps * in),
// stored as the bf16x3 split the products multiply (exactly the split the kernel used
// to form per k-step; the frame-rate transformer's matrices also as f32, for the frame
// stack: about 120 MB more at full size),
// and the transformer's RMSNorm weights are folded into the rows of the matrix that
// follows them (the kernel scales the product by 1/rms instead), the q/k/v
// projections are one matrix with RoPE pairs permuted next to each other, and
// gate/up are one matrix with their columns interleaved (gemm_params.h says why).
// Errors: invalid_input when a shape is one the kernels cannot run (odd channel
// counts, head_dim % 4 != 0, more than 16 codebooks), unavailable on a CUDA failure
// (named call, file:line). Blocking; the engine thread, at start-up.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include <vector_types.h>

#include "kernels/common/model_dims.h"
#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::voc {

struct gemm_matrix {
    // The products' operand (conv_gemm.cuh): per 16 rows of K ("chunk"), column n and
    // lane slot t in 0..3, the bf16x3 split of W[16 c + t + 4 i][n], i = 0..3, as the
    // packed pairs (hi 0-1, hi 2-3, lo 0-1, lo 2-3: each MMA's B registers adjacent as
    // loaded): one 16-byte shared-memory read
    // where each product step used to split four f32 values. [k_steps * 2][n_pad][4].
    const uint4* w_split = nullptr;
    // The same split for Hopper's warpgroup products (conv_gemm.cuh's gemm_wgmma tiles and
    // conv_implicit.cuh on sm_90a, wgmma.cuh): per k-step of 32, 8-column group, plane (hi,
    // lo) and 4 x 8 k slots (slot_order.h), an 8 x 8 core matrix, its column n's 8 bf16 in
    // 16 bytes: [k_steps][n_pad / 8][2][4][8] words, so a tile's k-step is one contiguous
    // run. Every matrix carries both layouts (the tile, and so the layout, is chosen per
    // batch size): at full size the weights' device memory went from 578 to 1,001 MB with
    // the second (bench vocoder, b46b5a7).
    const uint4* w_cores = nullptr;
    // The matrix as TF32 core matrices (weight_layouts.h's tf32_core_layout): only the decoder
    // blocks' 7-tap residual convs carry it (else null), whose implicit products multiply TF32
    // operands on sm_90a (conv_implicit.cuh) in place of bf16x3's three products: within the
    // audio's bound where no other layer's products are (tests/kernels/vocoder's
    // vocoder_precision, bench/RESULTS.md 2026-11-29). 64 MB more at full size.
    const uint4* w_tf32 = nullptr;
    // The f32 matrix [k_steps * 32][n_pad], for the frame stack's FMA products; only
    // the matrices it runs (the frame-rate transformer's) carry it, else null.
    const float* w = nullptr;
    const float* bias = nullptr;  // [N] or null
    int taps = 1, in = 0;         // K = taps * in
    int K = 0, N = 0, n_pad = 0, k_steps = 0;
};

struct device_snake {
    const float* alpha = nullptr;
    const float* inv_beta = nullptr;
};

struct device_layer {
    gemm_matrix qkv;      // input_norm folded; columns q | k | v
    gemm_matrix o;
    gemm_matrix gate_up;  // post_norm folded; columns gate 0, up 0, gate 1, ...
    gemm_matrix down;
    const float* attn_scale = nullptr;
    const float* mlp_scale = nullptr;
};

struct device_upsampler {
    int ratio = 0;
    gemm_matrix up;  // ConvTranspose phases
    int dw_taps = 0;
    const float *dw_weight = nullptr, *dw_bias = nullptr;  // [taps][channels]
    const float *norm_weight = nullptr, *norm_bias = nullptr;
    gemm_matrix pw1, pw2;
    const float* gamma = nullptr;
};

struct device_unit {
    int dilation = 0;
    device_snake act1, act2;
    gemm_matrix conv1, conv2;
};

struct device_block {
    int rate = 0;
    device_snake snake;
    gemm_matrix up;  // ConvTranspose phases
    std::array<device_unit, 3> units;
};

struct device_weights {
    vocoder_dims dims;
    const float* codebooks = nullptr;  // [quantizers][codebook_size][codebook_vector_dim]
    gemm_matrix dequant, pre_conv, input_proj, output_proj;  // output_proj: final norm folded
    std::vector<device_layer> layers;
    const float* inv_freq = nullptr;  // RoPE, [head_dim / 2]
    std::array<device_upsampler, 2> upsamplers;
    gemm_matrix decoder0;
    std::array<device_block, 4> blocks;
    device_snake final_snake;
    int final_taps = 0;
    const float *final_weight = nullptr, *final_bias = nullptr;  // [taps][channels], [1]
    std::size_t bytes = 0;  // device bytes of all of the above

    struct owner;
    std::shared_ptr<owner> memory;  // the allocations
};

// tf32_convs: the decoder blocks' 7-tap residual convs also as TF32 core matrices
// (gemm_matrix::w_tf32), for their products on sm_90a (cuda_vocoder_limits::tf32_convs).
result<device_weights> upload_weights(const ref::vocoder_weights& w, bool tf32_convs);

}  // namespace megatts::voc

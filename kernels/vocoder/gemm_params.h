// gemm_params: what one launch of the vocoder's matrix kernel (conv_gemm.cuh, or
// conv_implicit.cuh for a conv with many taps) computes: Y = epilogue(A x W) over the
// batch rows of one layer.
//
// Contract: POD, filled on the host (vocoder_program), passed by value. Every conv,
// linear map and transposed conv of the decoder is this product (the layouts of
// kernels/reference/vocoder/vocoder_weights.h): A's column k = tap * channels + c is
// input channel c of the row `(taps - 1 - tap) * dilation` rows earlier, so a causal
// conv reads its left context straight from a ring; W is [k_steps * 32][n_pad],
// zero past K and N, as its bf16x3 split (device_weights.h's gemm_matrix::w_split). The epilogue gets (row, column pair) once, after any split-K
// partial sums are added in split order: the result does not depend on timing.
#pragma once

#include <vector_types.h>

#include "kernels/vocoder/device_views.h"

namespace megatts::voc {

enum class gemm_act : int {
    none,
    gelu,      // exact GELU (ConvNeXt pwconv1)
    silu_mul,  // columns 2j, 2j+1 are gate j, up j; writes silu(gate) * up to column j
    qkv_rope,  // the attention projections; RoPE on q and k (see gemm_epilogue)
};

struct gemm_source {
    act_view view;
    int channels;  // input channels (A columns per tap)
    int taps;
    int dilation;
    int vec;       // 1: channels, width and slot stride are multiples of 4 (16-byte copies)
    // > 0: the product runs as an implicit GEMM (conv_implicit.cuh) that stages at most
    // this many input rows per tile; 0: conv_gemm.cuh.
    int staged_rows;
};

struct gemm_weights {
    const uint4* w_split;  // gemm_matrix::w_split: what conv_gemm reads
    const uint4* w_cores;  // gemm_matrix::w_cores: what conv_implicit reads on sm_90a; null if none
    // gemm_matrix::w_tf32, set only for an implicit product (a.staged_rows > 0): conv_implicit
    // on sm_90a multiplies TF32 operands from it instead of bf16x3's from w_cores.
    const uint4* w_tf32;
    const float* w;        // [k_steps * 32][n_pad] f32, the frame stack's; null if it never runs this one
    const float* bias;  // [N] or null
    int K, N, n_pad;
};

struct gemm_epilogue {
    gemm_act act;
    int row_norm;  // scale by 1 / rms(A row): RMSNorm whose weight is folded into W
    float eps;
    int phases;    // output rows per A row: a ConvTranspose's phases; else 1
    int channels;  // output channels: N / phases (N / 2 for silu_mul)
    // out = res + res_scale[c] * value (res_scale null: scale 1); res.data null: none.
    act_view res;
    const float* res_scale;
    act_view out;  // the value as is; data null: not stored
    // SnakeBeta(value) with these parameters, for a consumer that applies it first.
    act_view snake_out;
    const float* snake_alpha;
    const float* snake_inv_beta;
    // qkv_rope: columns [0, q_width) are q (to `out`), then k and v (to the slot's
    // rings at the frame's position). In each q and k head the columns come in pairs
    // (i, i + head_dim / 2), permuted next to each other at upload, so one thread
    // holds both halves of a rotation and writes them back to their own columns.
    act_view keys, values;
    int q_width, kv_width, head_dim;
    const float* inv_freq;  // [head_dim / 2]
};

struct gemm_params {
    const batch_desc* batch;
    int rows_per_frame;  // A rows per item
    gemm_source a;
    gemm_weights b;
    int k_steps;          // 32-wide steps of K (padded)
    int splits;           // split-K factor (gridDim.z)
    int steps_per_split;  // the last split may have fewer
    // 1: a tile's splits are one thread-block cluster (1 x 1 x splits, at most
    // k_max_cluster_splits) and add their partial tiles through distributed shared memory;
    // 0: through `workspace` and `counters`.
    int cluster_sum;
    gemm_epilogue epi;
    float* workspace;        // split-K partial tiles
    unsigned int* counters;  // split-K arrival counters, one per output tile, left at 0
};

// The most splits of a tile that add their partial tiles within a cluster: the largest
// cluster Hopper allows (above the portable 8; where the device allows less, the program
// finds no resident cluster of that size and splits go through the workspace).
inline constexpr int k_max_cluster_splits = 16;
// Tiles of at most this many rows do (the small batches' weight-streaming tiles, whose
// split K is where the last split's sum and epilogue were long). Larger tiles split K
// only at B = 32-64, where their kernels are left as they were.
inline constexpr int k_max_cluster_sum_rows = 64;

}  // namespace megatts::voc

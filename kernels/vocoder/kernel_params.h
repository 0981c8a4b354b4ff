// kernel_params: the launch parameters of the vocoder's small kernels (the matrix
// kernel's are in gemm_params.h), and the launch shapes they assume.
//
// Contract: POD, filled on the host (vocoder_program.cu), passed by value; each
// struct's kernel documents its grid and shared memory.
#pragma once

#include "kernels/vocoder/device_views.h"

namespace megatts::voc {

inline constexpr int k_attention_threads = 128;
inline constexpr int k_norm_threads = 256;
inline constexpr int k_max_norm_taps = 8;  // the ConvNeXt depthwise conv's (7 in the 12 Hz decoder)
inline constexpr int k_norm_channels = 4;  // channels whose reads a norm thread issues together (1024 / 256)
inline constexpr int k_gather_threads = 256;  // the 12 Hz codebooks' 256 dimensions in one pass
inline constexpr int k_output_tile = 64;     // samples per block
inline constexpr int k_output_threads = 256;  // threads that stage them

// sliding_attention's staged keys: rows head_dim + 4 floats apart, so that the threads
// of a quarter warp, each reading a float4 of its own key, hit distinct banks.
__host__ __device__ constexpr int attention_key_stride(int head_dim) { return head_dim + 4; }

// sliding_attention's shared memory: the query, the window's keys and values, the scores.
__host__ __device__ constexpr int attention_smem_floats(int window, int head_dim) {
    return head_dim + window * (attention_key_stride(head_dim) + head_dim) + window;
}

// Input rows padded to channels + 1 floats: the threads of a warp read one channel of
// consecutive rows, which would otherwise share a bank whenever channels % 32 == 0.
__host__ __device__ constexpr int output_conv_smem_floats(int channels, int taps) {
    return (k_output_tile + taps - 1) * (channels + 1) + taps * channels;
}

struct gather_params {
    const batch_desc* batch;
    const float* codebooks;  // [quantizers][codebook_size][dim]
    float* out;              // [items][2 * dim]
    int quantizers, codebook_size, dim;
};

struct attention_params {
    const batch_desc* batch;
    const float* q;        // [items][heads * head_dim]
    float* ctx;            // [items][heads * head_dim]
    act_view keys, values; // the layer's rings; ring_rows == window
    int heads, kv_heads, head_dim, window;
    float scale;           // 1 / sqrt(head_dim)
};

struct convnext_norm_params {
    const batch_desc* batch;
    act_view in;            // ring of the ConvTranspose output
    float* out;             // [rows][channels]
    const float* weight;    // [taps][channels]
    const float* bias;      // [channels]
    const float* norm_weight;
    const float* norm_bias;
    int channels, taps, rows_per_frame;
    float eps;
};

struct output_conv_params {
    const batch_desc* batch;
    act_view in;          // ring of SnakeBeta'd inputs
    const float* weight;  // [taps][channels]
    const float* bias;    // [1]
    float* audio;         // [items][rows_per_frame]
    int channels, taps, rows_per_frame;
    int vec;              // channels, row width and slot stride are multiples of 4
};

}  // namespace megatts::voc

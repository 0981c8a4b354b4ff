// convnext_norm: the first half of a ConvNeXt block: the depthwise causal conv over
// the ConvTranspose output's ring, then LayerNorm over channels (pwconv1 and pwconv2
// follow as conv_gemm launches).
//
// Contract (device): grid = one block per batch row of the bucket (rows_per_frame per
// item), blockDim.x a multiple of 32, dynamic shared memory = channels floats, taps <=
// k_max_norm_taps. Rows past the call's items do nothing. The conv sums bias then taps
// in order, as the reference's, so its output is bit-identical; the LayerNorm's sums
// are reordered.
//
// Why the tap rows are resolved first and read into registers before the sums: one
// ring lookup (a 64-bit modulo) and one dependent L2 read per tap and channel made
// this kernel 13-20 us at one session (Nsight Compute, H200). A thread's reads for
// k_norm_channels channels at a time, and the LayerNorm's parameters of its first ones
// before the sums, are in flight at once: a pass per channel was still a round trip each
// (11.4 -> 9.1 us at one session).
#pragma once

#include "kernels/vocoder/block_reduce.cuh"
#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

__global__ void convnext_norm_kernel(const __grid_constant__ convnext_norm_params p) {
    extern __shared__ float y[];
    __shared__ float scratch[32];
    const int m = blockIdx.x, n = p.rows_per_frame, C = p.channels;
    wait_for_predecessor();
    if (m >= p.batch->n_items * n) return;
    const item_desc& it = p.batch->items[m / n];
    const long t = static_cast<long>(it.frame) * n + m % n;
    __shared__ const float* tap_rows[k_max_norm_taps];  // null: the zero padding
    if (threadIdx.x < k_max_norm_taps)
        tap_rows[threadIdx.x] =
            threadIdx.x < p.taps ? history_row(p.in, it.slot, t - (p.taps - 1 - static_cast<int>(threadIdx.x))) : nullptr;
    __syncthreads();
    const int stride = static_cast<int>(blockDim.x);
    float norm_w[k_norm_channels], norm_b[k_norm_channels];  // of channels threadIdx.x + j * stride
#pragma unroll
    for (int j = 0; j < k_norm_channels; ++j) {
        const int c = static_cast<int>(threadIdx.x) + j * stride;
        norm_w[j] = c < C ? __ldg(p.norm_weight + c) : 0.f;
        norm_b[j] = c < C ? __ldg(p.norm_bias + c) : 0.f;
    }
    float sum = 0.f;
    for (int c0 = threadIdx.x; c0 < C; c0 += k_norm_channels * stride) {
        float x[k_norm_channels][k_max_norm_taps];
#pragma unroll
        for (int j = 0; j < k_norm_channels; ++j)
#pragma unroll
            for (int k = 0; k < k_max_norm_taps; ++k) {
                const int c = c0 + j * stride;
                x[j][k] = c < C && tap_rows[k] ? load_cg(tap_rows[k] + c) : 0.f;
            }
#pragma unroll
        for (int j = 0; j < k_norm_channels; ++j) {
            const int c = c0 + j * stride;
            if (c >= C) break;
            float v = __ldg(p.bias + c);
#pragma unroll
            for (int k = 0; k < k_max_norm_taps; ++k)
                if (tap_rows[k]) v += __ldg(p.weight + k * C + c) * x[j][k];
            y[c] = v;
            sum += v;
        }
    }
    const float mean = block_sum(sum, scratch) / static_cast<float>(C);
    float sq = 0.f;
    for (int c = threadIdx.x; c < C; c += stride) sq += (y[c] - mean) * (y[c] - mean);
    const float inv = 1.0f / sqrtf(block_sum(sq, scratch) / static_cast<float>(C) + p.eps);
    allow_successor();
    float* out = p.out + static_cast<long>(m) * C;
#pragma unroll
    for (int j = 0; j < k_norm_channels; ++j) {
        const int c = static_cast<int>(threadIdx.x) + j * stride;
        if (c < C) out[c] = (y[c] - mean) * inv * norm_w[j] + norm_b[j];
    }
    for (int c = static_cast<int>(threadIdx.x) + k_norm_channels * stride; c < C; c += stride)
        out[c] = (y[c] - mean) * inv * __ldg(p.norm_weight + c) + __ldg(p.norm_bias + c);
}

}  // namespace megatts::voc

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
// this kernel 13-20 us at one session (Nsight Compute, H200); now a thread's reads are
// all in flight at once.
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
    float sum = 0.f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float x[k_max_norm_taps];
#pragma unroll
        for (int k = 0; k < k_max_norm_taps; ++k) x[k] = tap_rows[k] ? load_cg(tap_rows[k] + c) : 0.f;
        float v = __ldg(p.bias + c);
#pragma unroll
        for (int k = 0; k < k_max_norm_taps; ++k)
            if (tap_rows[k]) v += __ldg(p.weight + k * C + c) * x[k];
        y[c] = v;
        sum += v;
    }
    const float mean = block_sum(sum, scratch) / static_cast<float>(C);
    float sq = 0.f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) sq += (y[c] - mean) * (y[c] - mean);
    const float inv = 1.0f / sqrtf(block_sum(sq, scratch) / static_cast<float>(C) + p.eps);
    allow_successor();
    float* out = p.out + static_cast<long>(m) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        out[c] = (y[c] - mean) * inv * __ldg(p.norm_weight + c) + __ldg(p.norm_bias + c);
}

}  // namespace megatts::voc

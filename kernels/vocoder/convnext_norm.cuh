// convnext_norm: the first half of a ConvNeXt block: the depthwise causal conv over
// the ConvTranspose output's ring, then LayerNorm over channels (pwconv1 and pwconv2
// follow as conv_gemm launches).
//
// Contract (device): grid = one block per batch row of the bucket (rows_per_frame per
// item), blockDim.x a multiple of 32, dynamic shared memory = channels floats. Rows
// past the call's items do nothing. The conv sums bias then taps in order, as the
// reference's, so its output is bit-identical; the LayerNorm's sums are reordered.
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
    float sum = 0.f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float v = __ldg(p.bias + c);
        for (int k = 0; k < p.taps; ++k)
            if (const float* x = history_row(p.in, it.slot, t - (p.taps - 1 - k)))
                v += __ldg(p.weight + k * C + c) * load_cg(x + c);
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

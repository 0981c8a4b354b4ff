// codebook_gather: the dequantiser's lookups. For each item of the call it writes
// [codebook 0's vector, sum of codebooks 1..Q-1's vectors], the input of the stacked
// rvq_first / rvq_rest output projections (a conv_gemm).
//
// Contract (device): grid = one block per item slot of the bucket, any block size;
// blocks past the call's items do nothing. Codes were checked on the host. Sums run
// in codebook order from zero, as the reference's, so the result is bit-identical.
#pragma once

#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"

namespace megatts::voc {

__global__ void codebook_gather_kernel(const __grid_constant__ gather_params p) {
    const int i = blockIdx.x;
    wait_for_predecessor();
    if (i >= p.batch->n_items) return;
    const item_desc& it = p.batch->items[i];
    float* out = p.out + static_cast<long>(i) * 2 * p.dim;
    auto vector = [&](int q) {
        return p.codebooks + (static_cast<long>(q) * p.codebook_size + it.codes[q]) * p.dim;
    };
    for (int k = threadIdx.x; k < p.dim; k += blockDim.x) {
        out[k] = __ldg(vector(0) + k);
        float sum = 0.f;
        for (int q = 1; q < p.quantizers; ++q) sum += __ldg(vector(q) + k);
        out[p.dim + k] = sum;
    }
    allow_successor();
}

}  // namespace megatts::voc

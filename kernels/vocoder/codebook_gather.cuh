// codebook_gather: the dequantiser's lookups. For each item of the call it writes
// [codebook 0's vector, sum of codebooks 1..Q-1's vectors], the input of the stacked
// rvq_first / rvq_rest output projections (a conv_gemm).
//
// Contract (device): grid = one block per item slot of the bucket, any block size;
// blocks past the call's items do nothing. Codes were checked on the host. Sums run
// in codebook order from zero, as the reference's, so the result is bit-identical.
//
// Why each thread issues all its codebooks' loads before it adds: the codebooks (64 MB at
// full size) are read at random rows, mostly from DRAM, and loaded one after another as the
// sum went, each element was a chain of 15 such reads: 12.1 us at one session, 3.2 with the
// loads issued together (Nsight Compute, H200).
#pragma once

#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"

namespace megatts::voc {

__global__ void codebook_gather_kernel(const __grid_constant__ gather_params p) {
    const int i = blockIdx.x;
    wait_for_predecessor();
    if (i >= p.batch->n_items) return;
    __shared__ const float* rows[k_max_codebooks];  // each codebook's vector of this item's code
    if (threadIdx.x < p.quantizers) {
        const int q = static_cast<int>(threadIdx.x);
        rows[q] = p.codebooks + (static_cast<long>(q) * p.codebook_size + p.batch->items[i].codes[q]) * p.dim;
    }
    __syncthreads();
    float* out = p.out + static_cast<long>(i) * 2 * p.dim;
    for (int k = threadIdx.x; k < p.dim; k += blockDim.x) {
        float v[k_max_codebooks];
#pragma unroll
        for (int q = 0; q < k_max_codebooks; ++q) v[q] = q < p.quantizers ? __ldg(rows[q] + k) : 0.f;
        out[k] = v[0];
        float sum = 0.f;
#pragma unroll
        for (int q = 1; q < k_max_codebooks; ++q)
            if (q < p.quantizers) sum += v[q];
        out[p.dim + k] = sum;
    }
    allow_successor();
}

}  // namespace megatts::voc

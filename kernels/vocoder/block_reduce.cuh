// block_reduce: the sum, or the largest, of one float over all threads of a block.
//
// Contract (device, whole block): every thread calls block_sum() or block_max() with
// the same `scratch` (32 floats of shared memory) and gets the result; blockDim.x is a
// multiple of 32. Each synchronises the block twice, so either may be called again
// right after with the same scratch.
#pragma once

#include <cfloat>

namespace megatts::voc {

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float total = lane < warps ? scratch[lane] : 0.f;
    total = warp_sum(total);
    __syncthreads();
    return total;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    v = warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float best = lane < warps ? scratch[lane] : -FLT_MAX;
    best = warp_max(best);
    __syncthreads();
    return best;
}

}  // namespace megatts::voc

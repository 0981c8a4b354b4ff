// block_reduce: the sum of one float over all threads of a block.
//
// Contract (device, whole block): every thread calls block_sum() with the same
// `scratch` (32 floats of shared memory) and gets the total; blockDim.x is a
// multiple of 32. It synchronises the block twice, so it may be called again right
// after with the same scratch.
#pragma once

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

}  // namespace megatts::voc

// block_reduce: the sum, or the largest, of one float over all threads of a block.
//
// Contract (device, whole block): every thread calls block_sum() or block_max() with
// the same `scratch` (32 floats of shared memory) and gets the result; blockDim.x is a
// multiple of 32. Each synchronises the block twice, so either may be called again
// right after with the same scratch.
#pragma once

#include <cfloat>

namespace megatts::voc {

template <class Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
    for (int o = 16; o; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// `identity` fills the lanes past the block's warps in the second round.
template <class Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch, float identity, Op op) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    v = warp_reduce(v, op);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float total = lane < warps ? scratch[lane] : identity;
    total = warp_reduce(total, op);
    __syncthreads();
    return total;
}

struct add_op {
    __device__ float operator()(float a, float b) const { return a + b; }
};

struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ __forceinline__ float warp_sum(float v) { return warp_reduce(v, add_op{}); }

__device__ __forceinline__ float warp_max(float v) { return warp_reduce(v, max_op{}); }

__device__ __forceinline__ float block_sum(float v, float* scratch) { return block_reduce(v, scratch, 0.f, add_op{}); }

__device__ __forceinline__ float block_max(float v, float* scratch) {
    return block_reduce(v, scratch, -FLT_MAX, max_op{});
}

}  // namespace megatts::voc

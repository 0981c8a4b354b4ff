// sliding_attention: one layer of the vocoder transformer's self-attention for every
// item of a call: the query of the frame's position p against the slot's keys and
// values at positions max(0, p - window + 1) .. p (window keys, itself included),
// softmax, weighted sum. The qkv conv_gemm wrote this frame's q (RoPE applied) to a
// flat buffer and its k, v to the slot's rings, which hold the last `window`
// positions.
//
// Contract (device): one block of k_attention_threads per (item, head), dynamic
// shared memory = attention_smem_floats() floats; head_dim % 4 == 0. Blocks past the
// call's items do nothing. Output: ctx[item][head * head_dim + d], the o_proj input.
// attend_head() is one (item, head) on whatever block calls it: the frame stack
// (frame_stack.cuh) runs the same code inside its persistent launch.
// Each score sums its products in the order the reference does (four at a time) and
// each output sums the weighted values in key order; the softmax's sums are
// reordered.
//
// Why a block that stages K and V first: one warp per (item, head) walking the keys
// from L2 made every key's dot product and every output's sum a chain of dependent
// L2 reads (33 us a layer at one session, measured with Nsight Compute on the H200).
// Here all of the head's window is requested at once (cp.async), then read from
// shared memory.
#pragma once

#include <cfloat>

#include "kernels/common/cp_async.cuh"
#include "kernels/vocoder/block_reduce.cuh"
#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

// One (item i, head h) on the calling block (any multiple of 32 threads; `smem`:
// attention_smem_floats() floats, `scratch`: 32). A block that calls it again must
// synchronise first: the output loop still reads the staged values.
__device__ __forceinline__ void attend_head(const attention_params& p, int i, int h, float* smem, float* scratch) {
    const int hd = p.head_dim, key_stride = attention_key_stride(hd);
    float* q = smem;                                 // [hd]
    float* keys = q + hd;                            // [window][key_stride]
    float* values = keys + p.window * key_stride;    // [window][hd]
    float* scores = values + p.window * hd;          // [window]
    const item_desc& it = p.batch->items[i];
    const int first = max(0, it.frame - p.window + 1), count = it.frame - first + 1;
    const long kv_col = static_cast<long>(h / (p.heads / p.kv_heads)) * hd;
    const float* k_slot = p.keys.data + it.slot * p.keys.slot_stride + kv_col;
    const float* v_slot = p.values.data + it.slot * p.values.slot_stride + kv_col;
    const float* q_row = p.q + static_cast<long>(i) * p.heads * hd + h * hd;
    const int vecs = hd / 4;
    for (int e = threadIdx.x; e < vecs; e += blockDim.x) cp_async::copy16(q + 4 * e, q_row + 4 * e);
    for (int e = threadIdx.x; e < count * vecs; e += blockDim.x) {
        const int j = e / vecs, d = (e - j * vecs) * 4;
        const long row = (first + j) % p.window;  // the ring row of key j
        cp_async::copy16(keys + j * key_stride + d, k_slot + row * p.keys.width + d);
        cp_async::copy16(values + j * hd + d, v_slot + row * p.values.width + d);
    }
    cp_async::wait_all();
    __syncthreads();

    float best = -FLT_MAX;
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        const float* k = keys + j * key_stride;
        float s = 0.f;
#pragma unroll 4
        for (int d = 0; d < hd; d += 4) {
            const float4 kv = *reinterpret_cast<const float4*>(k + d);
            const float4 qv = *reinterpret_cast<const float4*>(q + d);
            s += qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w;
        }
        s *= p.scale;
        scores[j] = s;
        best = fmaxf(best, s);
    }
    best = block_max(best, scratch);
    float sum = 0.f;
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        const float e = expf(scores[j] - best);
        scores[j] = e;
        sum += e;
    }
    sum = block_sum(sum, scratch);  // its barriers also publish the scores
    float* out = p.ctx + static_cast<long>(i) * p.heads * hd + h * hd;
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float acc = 0.f;
        // Unrolled so that later keys' loads issue while the sum waits (it adds in key order):
        // at 64 items a launch 7.2 -> 6.8 us (Nsight Compute, H200).
#pragma unroll 8
        for (int j = 0; j < count; ++j) acc += scores[j] * values[j * hd + d];
        out[d] = acc / sum;
    }
}

__global__ void __launch_bounds__(k_attention_threads) sliding_attention_kernel(const __grid_constant__ attention_params p) {
    extern __shared__ __align__(16) float smem[];
    __shared__ float scratch[32];
    const int i = blockIdx.x / p.heads, h = blockIdx.x % p.heads;
    wait_for_predecessor();
    if (i >= p.batch->n_items) return;
    allow_successor();
    attend_head(p, i, h, smem, scratch);
}

}  // namespace megatts::voc

// sliding_attention: one layer of the vocoder transformer's self-attention for every
// item of a call: the query of the frame's position p against the slot's keys and
// values at positions max(0, p - window + 1) .. p (window keys, itself included),
// softmax, weighted sum. The qkv conv_gemm wrote this frame's q (RoPE applied) to a
// flat buffer and its k, v to the slot's rings, which hold the last `window`
// positions.
//
// Contract (device): one warp per (item, head), k_attention_warps warps per block,
// dynamic shared memory = k_attention_warps * attention_warp_floats() floats;
// head_dim % 4 == 0. Warps past the call's items do nothing. Output: ctx[item][head *
// head_dim + d], the o_proj input.
#pragma once

#include <cfloat>

#include "kernels/vocoder/block_reduce.cuh"
#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__global__ void __launch_bounds__(k_attention_warps * 32) sliding_attention_kernel(const __grid_constant__ attention_params p) {
    extern __shared__ float smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int hd = p.head_dim;
    float* q = smem + warp * attention_warp_floats(p.window, hd);  // first: 16-byte aligned
    float* scores = q + hd;
    int* key_rows = reinterpret_cast<int*>(scores + p.window);  // ring row of key j
    const int task = blockIdx.x * k_attention_warps + warp;
    const int i = task / p.heads, h = task % p.heads;
    wait_for_predecessor();
    if (i >= p.batch->n_items) return;
    const item_desc& it = p.batch->items[i];
    const int first = max(0, it.frame - p.window + 1), count = it.frame - first + 1;
    const long kv_col = static_cast<long>(h / (p.heads / p.kv_heads)) * hd;
    const long slot_base = it.slot * p.keys.slot_stride;
    const float* q_row = p.q + static_cast<long>(i) * p.heads * hd + h * hd;
    for (int d = lane; d < hd; d += 32) q[d] = load_cg(q_row + d);
    for (int j = lane; j < count; j += 32) key_rows[j] = (first + j) % p.window;
    __syncwarp();

    float best = -FLT_MAX;
    for (int j = lane; j < count; j += 32) {
        const float* k = p.keys.data + slot_base + static_cast<long>(key_rows[j]) * p.keys.width + kv_col;
        float s = 0.f;
        for (int d = 0; d < hd; d += 4) {
            const float4 kv = load_cg4(k + d);
            const float4 qv = *reinterpret_cast<const float4*>(q + d);
            s += qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w;
        }
        s *= p.scale;
        scores[j] = s;
        best = fmaxf(best, s);
    }
    best = warp_max(best);
    float sum = 0.f;
    for (int j = lane; j < count; j += 32) {
        const float e = expf(scores[j] - best);
        scores[j] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    __syncwarp();
    const float* v0 = p.values.data + it.slot * p.values.slot_stride + kv_col;
    float* out = p.ctx + static_cast<long>(i) * p.heads * hd + h * hd;
    for (int d = lane; d < hd; d += 32) {
        float acc = 0.f;
        for (int j = 0; j < count; ++j) acc += scores[j] * load_cg(v0 + static_cast<long>(key_rows[j]) * p.values.width + d);
        out[d] = acc / sum;
    }
    allow_successor();
}

}  // namespace megatts::voc

// output_conv: the decoder's last layer, decoder.6: a causal conv from the SnakeBeta'd
// channels (the ring that the last residual unit's epilogue wrote) to one audio
// sample per row, plus bias, clamped to [-1, 1].
//
// Contract (device): grid (ceil(rows_per_frame / k_output_tile), items of the bucket),
// k_output_threads threads, dynamic shared memory = output_conv_smem_floats() floats.
// Items past the call's do nothing. Each sample sums bias, then taps, then channels,
// as the reference does, so from the same inputs it is bit-identical. p.vec: the
// ring's rows and channels are whole 16-byte units (staged four floats a load).
//
// Why more threads than samples: the staging of the tile's input rows is the
// kernel's latency (64 threads, one float a load, were 40-58 us at one session on
// the H200, most of it waiting on loads); all k_output_threads stage, the first
// k_output_tile then sum.
#pragma once

#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/programmatic_launch.cuh"
#include "kernels/vocoder/view_addressing.cuh"

namespace megatts::voc {

__global__ void __launch_bounds__(k_output_threads) output_conv_kernel(const __grid_constant__ output_conv_params p) {
    extern __shared__ float smem[];
    const int C = p.channels, stride = C + 1, n = p.rows_per_frame;
    const int rows = k_output_tile + p.taps - 1;
    float* x = smem;
    float* w = smem + rows * stride;
    const int i = blockIdx.y, r0 = blockIdx.x * k_output_tile;
    for (int e = threadIdx.x; e < p.taps * C; e += blockDim.x) w[e] = __ldg(p.weight + e);
    wait_for_predecessor();
    if (i >= p.batch->n_items) return;
    const item_desc& it = p.batch->items[i];
    const long t0 = static_cast<long>(it.frame) * n + r0 - (p.taps - 1);
    // The ring index of the tile's first row once, then one step per row: a 64-bit
    // modulo per element was most of this kernel's time. t0 >= 1 - taps and the tile's
    // rows are fewer than the ring's, so one wrap at most.
    const int ring = p.in.ring_rows;
    const int first = t0 >= 0 ? static_cast<int>(t0 % ring) : static_cast<int>(t0 + ring);
    const float* slot = p.in.data + it.slot * p.in.slot_stride;
    // Rows before the session's start are the zero padding; rows past the frame's end
    // (a partial last tile) are never used: read none.
    const auto row_of = [&](int rr) -> const float* {
        if (t0 + rr < 0 || r0 - (p.taps - 1) + rr >= n) return nullptr;
        return slot + static_cast<long>(first + rr < ring ? first + rr : first + rr - ring) * p.in.width;
    };
    if (p.vec) {
        const int vecs = C / 4;
#pragma unroll 4
        for (int e = threadIdx.x; e < rows * vecs; e += blockDim.x) {
            const int rr = e / vecs, c = (e - rr * vecs) * 4;
            const float* src = row_of(rr);
            const float4 v = src ? load_cg4(src + c) : make_float4(0.f, 0.f, 0.f, 0.f);
            float* d = x + rr * stride + c;
            d[0] = v.x;
            d[1] = v.y;
            d[2] = v.z;
            d[3] = v.w;
        }
    } else {
#pragma unroll 4
        for (int e = threadIdx.x; e < rows * C; e += blockDim.x) {
            const int rr = e / C, c = e - rr * C;
            const float* src = row_of(rr);
            x[rr * stride + c] = src ? load_cg(src + c) : 0.f;
        }
    }
    __syncthreads();
    allow_successor();
    const int r = r0 + threadIdx.x;
    if (threadIdx.x >= k_output_tile || r >= n) return;
    float acc = __ldg(p.bias);
    for (int k = 0; k < p.taps; ++k)
        for (int c = 0; c < C; ++c) acc += w[k * C + c] * x[(threadIdx.x + k) * stride + c];
    p.audio[static_cast<long>(i) * n + r] = fminf(fmaxf(acc, -1.f), 1.f);
}

}  // namespace megatts::voc

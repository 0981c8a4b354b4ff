// bf16x3: an f32-accurate matrix step on bf16 tensor cores. Each f32 operand is
// split into its bf16 rounding ("hi") and the bf16 rounding of the remainder ("lo"),
// and a*b ~ a_hi*b_lo + a_lo*b_hi + a_hi*b_hi: three m16n8k16 products that carry
// about 17 bits of each operand (the dropped a_lo*b_lo and the remainders' rounding
// are below 2^-17 of a product), where one bf16 product carries 8.
//
// Why this split and not TF32's: one bf16 m16n8k16 product does the work of two TF32
// m16n8k8 ones in the same tensor-core time, so three bf16 products cost what one and
// a half TF32 products do; the TF32 split (a_big*b_small + a_small*b_big + a_big*b_big,
// 21 bits) took three full TF32 products, and at B = 64 the vocoder's k = 7 convs ran at
// the mma.sync ceiling for them. Why not fewer products: rounding either operand to TF32
// alone moves the full-size audio by 1.5e-3 of its peak over the vocoder's ~50 layers,
// one bf16 product by 1.8e-2, both beyond the 1e-3 the parity test allows; with this
// split it stays at 3.6e-5, as it did with TF32's (gpu suite, full size, 80 frames).
//
// Fragments as kernels/common/mma_bf16.cuh lays them out. A dot product may add its K
// terms in any order, so the caller maps slots to its K however its shared-memory banks
// like, the same way for A and B (conv_gemm.cuh: slots 2t, 2t+1, 2t+8, 2t+9 read k = t,
// t+4, t+8, t+12 of each 16).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "kernels/common/mma_bf16.cuh"

namespace megatts::voc {

// Two f32 values (lower k first) as packed bf16 pairs: their roundings and the roundings of
// what those left over.
struct bf16x2_split {
    std::uint32_t hi, lo;
};

__device__ __forceinline__ std::uint32_t as_u32(__nv_bfloat162 v) {
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ bf16x2_split split_bf16x2(float first, float second) {
    const __nv_bfloat162 hi = __floats2bfloat162_rn(first, second);
    // Exact in f32: hi is x rounded to 8 significant bits, so x - hi has at most 16.
    const __nv_bfloat162 lo = __floats2bfloat162_rn(first - __low2float(hi), second - __high2float(hi));
    return {as_u32(hi), as_u32(lo)};
}

// c += a * b with a, b split; the small products first, while c is smallest.
__device__ __forceinline__ void mma_bf16x3(float (&c)[4], const std::uint32_t (&a_hi)[4],
                                           const std::uint32_t (&a_lo)[4], bf16x2_split b0, bf16x2_split b1) {
    mma_bf16(c, a_hi[0], a_hi[1], a_hi[2], a_hi[3], b0.lo, b1.lo);
    mma_bf16(c, a_lo[0], a_lo[1], a_lo[2], a_lo[3], b0.hi, b1.hi);
    mma_bf16(c, a_hi[0], a_hi[1], a_hi[2], a_hi[3], b0.hi, b1.hi);
}

}  // namespace megatts::voc

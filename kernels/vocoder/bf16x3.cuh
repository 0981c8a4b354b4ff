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
// Fragments (PTX mma.m16n8k16 .bf16, lane = 4 g + t; two bf16 per register, the lower
// k in the low half): A rows g, g+8 at k slots (2t, 2t+1) and (2t+8, 2t+9) in a0..a3 =
// (g, lo) (g+8, lo) (g, hi) (g+8, hi); B column g at the same slots in b0, b1; C as for
// every m16n8 shape: rows g, g+8, columns 2t, 2t+1. A dot product may add its K terms in
// any order, so the caller maps slots to its K however its shared-memory banks like,
// the same way for A and B (conv_gemm.cuh: slots 2t, 2t+1, 2t+8, 2t+9 read k = t, t+4,
// t+8, t+12 of each 16).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

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

__device__ __forceinline__ void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a * b with a, b split; the small products first, while c is smallest.
__device__ __forceinline__ void mma_bf16x3(float (&c)[4], const std::uint32_t (&a_hi)[4],
                                           const std::uint32_t (&a_lo)[4], bf16x2_split b0, bf16x2_split b1) {
    mma_bf16(c, a_hi, b0.lo, b1.lo);
    mma_bf16(c, a_lo, b0.hi, b1.hi);
    mma_bf16(c, a_hi, b0.hi, b1.hi);
}

}  // namespace megatts::voc

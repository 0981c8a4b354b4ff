// tf32x3: an f32-accurate matrix step on TF32 tensor cores. Each f32 operand is
// split into a TF32 "big" part and the TF32 rounding of its remainder, and
// a*b ~ a_big*b_small + a_small*b_big + a_big*b_big: the three m16n8k8 products carry
// about 21 bits of each operand, where one product carries 10.
//
// Why not one TF32 product: on the full-size checkpoint, rounding either operand to
// TF32 alone already moves the audio by 1.5e-3 of its peak over the vocoder's ~50
// layers (one bf16 product: 1.8e-2), beyond the 1e-3 the parity test allows; the
// split product stays at 6e-6 (a CPU simulation of the reference decoder).
//
// Fragments (PTX mma.m16n8k8 .tf32, lane = 4 g + t): A rows g, g+8 and columns t,
// t+4 in a0..a3 = (g,t) (g+8,t) (g,t+4) (g+8,t+4); B column g, rows t, t+4 in b0, b1;
// C rows g, g+8 and columns 2t, 2t+1 in c0..c3 = (g,2t) (g,2t+1) (g+8,2t) (g+8,2t+1).
#pragma once

#include <cstdint>

namespace megatts::voc {

struct tf32_pair {
    std::uint32_t big, small;
};

__device__ __forceinline__ std::uint32_t to_tf32(float x) {
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ tf32_pair split_tf32(float x) {
    const std::uint32_t big = to_tf32(x);
    return {big, to_tf32(x - __uint_as_float(big))};
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a * b with a, b split; the small products first, while c is smallest.
__device__ __forceinline__ void mma_tf32x3(float (&c)[4], const std::uint32_t (&a_big)[4],
                                           const std::uint32_t (&a_small)[4], tf32_pair b0, tf32_pair b1) {
    mma_tf32(c, a_big, b0.small, b1.small);
    mma_tf32(c, a_small, b0.big, b1.big);
    mma_tf32(c, a_big, b0.big, b1.big);
}

}  // namespace megatts::voc

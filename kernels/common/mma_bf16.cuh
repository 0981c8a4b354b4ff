// mma_bf16: one m16n8k16 bf16 tensor-core product with f32 accumulation (PTX
// mma.sync), the step the megakernel's skinny products and the vocoder's bf16x3
// conv-GEMMs are both made of.
//
// Contract (device, whole warp, converged): c += A x B for lane = 4 g + t holding
// A rows g, g+8 at k slots (2t, 2t+1) and (2t+8, 2t+9) in a0..a3 = (g, lo) (g+8, lo)
// (g, hi) (g+8, hi), two bf16 per register with the lower k in the low half; B column
// g at the same slots in b0, b1; C rows g, g+8 and columns 2t, 2t+1 in c[0..3] =
// (g,2t) (g,2t+1) (g+8,2t) (g+8,2t+1). Which K each slot stands for is the caller's
// choice, the same for A and B.
#pragma once

#include <cstdint>

namespace megatts {

__device__ __forceinline__ void mma_bf16(float (&c)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                         std::uint32_t a3, std::uint32_t b0, std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

}  // namespace megatts

// mma: the tensor-core step of the skinny matrix products: one m16n8k16 bf16 MMA
// with f32 accumulation, and the register layout that lets each lane feed it from
// plain 16-byte weight loads.
//
// Layout (why it is legal): a dot product may sum its K terms in any order, so the
// kernel permutes K inside every 64-wide chunk such that a lane's A fragment is
// exactly what it loaded: lane (g = lane/4, t = lane%4) loads 8 bf16 of weight rows
// g and g+8 at chunk offsets 8t and 32+8t. In MMA step s (0..3) it then uses the 4
// values at 4(s%2) of the load at 32(s/2), and the B fragment (activations, batch
// row g) is the 4 bf16 at chunk offset 32(s/2) + 8t + 4(s%2): one 8-byte read.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "kernels/common/mma_bf16.cuh"

namespace megatts::mk {

struct frag_c {
    float v[4];  // rows (g, g+8) x batch columns (2t, 2t+1): v0=(g,2t) v1=(g,2t+1) v2=(g+8,2t) v3=(g+8,2t+1)
};

// A 16-byte weight load that bypasses L1 (weights are read once per phase).
__device__ __forceinline__ uint4 load_weights(const void* p) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
}

}  // namespace megatts::mk

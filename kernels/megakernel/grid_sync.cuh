// grid_sync: dependency counters between the phases of the persistent frame kernel: the
// barrier of kernels/common/grid_barrier.cuh (the host zeroes the counter before each
// launch), and the L2 prefetch of a small vector that a later phase reads (the weights'
// prefetch, which needs matvec's work split, is matvec.cuh's prefetch_rest()).
#pragma once

#include "kernels/common/grid_barrier.cuh"

namespace megatts::mk {

using megatts::arrive;
using megatts::wait;

// Asks the L2 for a small vector that every block reads in a later phase (a norm's weights, read
// once a layer): with the layers' weights streamed in between it is no longer there, and its
// read is a link of that phase's chain.
__device__ __forceinline__ void prefetch_vector(const void* v, int bytes) {
    if (!v) return;
    for (int off = threadIdx.x * 128; off < bytes; off += blockDim.x * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const char*>(v) + off));
}

}  // namespace megatts::mk

// grid_sync: dependency counters between the phases of the persistent frame kernel: the
// barrier of kernels/common/grid_barrier.cuh (the host zeroes the counter before each
// launch), and the L2 prefetch of later phases' weights that fills its waits.
#pragma once

#include "kernels/common/grid_barrier.cuh"

namespace megatts::mk {

using megatts::arrive;
using megatts::wait;

// Asks the L2 to fetch the weight rows this block will read in a later matvec phase
// (tiles are handed out block-strided, so the block knows them now). Issued before a
// barrier wait, it turns the wait into weight streaming.
__device__ __forceinline__ void prefetch_tiles(const void* w, int n_rows, int K, int rows_per_tile) {
    if (!w) return;
    const char* base = static_cast<const char*>(w);
    const long tile_bytes = static_cast<long>(rows_per_tile) * K * 2;
    for (int tile = blockIdx.x; tile < n_rows / rows_per_tile; tile += gridDim.x)
        for (long off = threadIdx.x * 128L; off < tile_bytes; off += blockDim.x * 128L)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(base + tile * tile_bytes + off));
}

// Asks the L2 for a small vector that every block reads in a later phase (a norm's weights, read
// once a layer): with the layers' weights streamed in between it is no longer there, and its
// read is a link of that phase's chain.
__device__ __forceinline__ void prefetch_vector(const void* v, int bytes) {
    if (!v) return;
    for (int off = threadIdx.x * 128; off < bytes; off += blockDim.x * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const char*>(v) + off));
}

}  // namespace megatts::mk

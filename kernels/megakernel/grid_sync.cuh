// grid_sync: dependency counters between the phases of the persistent frame kernel.
//
// Contract: every block calls arrive(counter), then wait(counter, phase), at the end of
// each phase, with phase numbers 1, 2, 3, ... in the same order in every block. The
// counter is monotonic within a launch (never reset in-kernel, which is what made
// other megakernels race) and zeroed by the host before each launch. Requires all
// blocks co-resident (the host launches one block per SM and checks occupancy).
// Between arriving and waiting, callers may issue loads for the next phase's weights: they
// do not depend on activations, so the wait overlaps with memory traffic.
#pragma once

namespace megatts::mk {

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The two halves of a barrier. arrive() counts the block in once all its threads are done
// with the phase; wait() returns once every block has arrived at `phase`. Between them a
// block may issue loads of data no phase writes (weights): they overlap the wait. Issued
// before arrive() instead, they delay the arrival, which is a release (measured on the
// H100: a whole frame at B = 1 took 4.91 ms with the loads before, 4.43 ms after).
__device__ __forceinline__ void arrive(unsigned int* counter) {
    __syncthreads();
    // Release this block's writes of the phase, then count the block in.
    if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

__device__ __forceinline__ void wait(unsigned int* counter, unsigned int phase) {
    if (threadIdx.x == 0) {
        const unsigned int target = phase * gridDim.x;
        while (load_acquire(counter) < target) __nanosleep(32);
    }
    __syncthreads();
}

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

}  // namespace megatts::mk

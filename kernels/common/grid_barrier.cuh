// grid_barrier: a barrier between the phases of a persistent kernel (the megakernel's
// frame, the vocoder's frame-rate transformer), from one counter in device memory.
//
// Contract: every block calls arrive(counter), then wait(counter, phase), at the end of
// each phase, with phase numbers 1, 2, 3, ... in the same order in every block. The
// counter is monotonic within a launch (never reset while a block may still wait on it,
// which is what made other megakernels race) and 0 when the launch begins: the host
// zeroes it, or the launch's last block to finish resets it once every block is past its
// last wait. Requires all blocks co-resident (one block per SM, occupancy checked by the
// host). Between arriving and waiting, callers may issue loads of data no phase writes
// (weights): the wait then overlaps with memory traffic.
#pragma once

namespace megatts {

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The two halves of a barrier. arrive() counts the block in once all its threads are done
// with the phase; wait() returns once every block has arrived at `phase`. Loads issued
// before arrive() instead of between the halves delay the arrival, which is a release
// (measured on the H100: a megakernel frame at B = 1 took 4.91 ms with the loads before,
// 4.43 ms after).
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

// Counts the calling thread's block in at *ticket and returns how many came before it,
// releasing every write the block made before its last __syncthreads() (that barrier
// orders them before this thread's release, as in arrive()) and acquiring those of the
// blocks before it for the whole block once it syncs again. One thread per block calls it,
// between two __syncthreads() (or per warp, between two __syncwarp()): a __threadfence() in
// every thread did the same at a higher cost (Nsight Compute at B = 64: 2% of the
// megakernel's stall samples, on split K's fences).
__device__ __forceinline__ unsigned int take_ticket(unsigned int* ticket) {
    unsigned int before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(ticket) : "memory");
    return before;
}

}  // namespace megatts

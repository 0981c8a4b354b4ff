// mbarrier: shared-memory arrival barriers and the bulk copies that complete on them (sm_90+),
// the way a producer warp hands a block's consumer warps each pipeline stage (the vocoder's
// conv_implicit.cuh): one barrier per stage says "full" (the copy's bytes have landed), another
// "empty" (every consumer is done reading it).
//
// Contract: a barrier is a std::uint64_t in shared memory, initialised by one thread with the
// arrivals each phase needs, and published to the block by a barrier (__syncthreads) before
// any other thread uses it. A phase completes once it has its arrivals and, where a thread
// announced bytes (arrive_expect_tx), those bytes have landed. wait(bar, parity) returns once
// the phase of that parity has completed: phase k of a barrier (k = 0, 1, ...) has parity
// k % 2, and a waiter must not fall two phases behind. arrive_if() releases the arriving
// thread's earlier shared-memory accesses to whoever waits on the phase; wait() acquires them.
// bulk_copy() moves `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to
// shared memory through the L2, the bytes counted against the barrier's current phase; the
// issuing thread need not stay to see it land.
#pragma once

#include <cstdint>

namespace megatts::mbarrier {

__device__ __forceinline__ unsigned address(const std::uint64_t* bar) {
    return static_cast<unsigned>(__cvta_generic_to_shared(bar));
}

__device__ __forceinline__ void init(std::uint64_t* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(address(bar)), "r"(arrivals) : "memory");
}

// An arrival where `arriving` (one thread of a warp for the warp, say), as a predicated
// instruction rather than a branch around one.
__device__ __forceinline__ void arrive_if(std::uint64_t* bar, bool arriving) {
    asm volatile(
        "{\n.reg .pred arriving;\n"
        "setp.ne.b32 arriving, %1, 0;\n"
        "@arriving mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(address(bar)),
        "r"(static_cast<int>(arriving))
        : "memory");
}

// One arrival, and `bytes` more to land before the phase completes.
__device__ __forceinline__ void arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(address(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void wait(std::uint64_t* bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "waiting:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra waiting;\n}\n" ::"r"(address(bar)),
        "r"(parity)
        : "memory");
}

__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            static_cast<unsigned>(__cvta_generic_to_shared(dst))),
        "l"(src), "r"(bytes), "r"(address(bar))
        : "memory");
}

}  // namespace megatts::mbarrier

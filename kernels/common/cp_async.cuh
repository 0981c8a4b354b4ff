// cp_async: asynchronous global-to-shared copies (sm_80+), the way the vocoder's conv_gemm
// keeps several k-steps in flight per block and the megakernel's matvec stages its
// activation rows.
//
// Contract: copy16() moves 16 bytes (both addresses 16-byte aligned) through the L2
// only (.cg: never a possibly stale L1 line, see kernels/vocoder/view_addressing.cuh), or
// zero-fills the 16 bytes when !valid (src is then not read but must be a mapped address);
// copy16_l1() the same through the L1 (.ca), for lines no other block writes during the launch.
// commit() closes a group of copies; wait_groups<N>() returns once at most N groups
// of this thread are pending; wait_all() once all of this thread's copies, grouped or
// not, have landed. Copies become visible to other threads only after the wait and a __syncthreads().
#pragma once

namespace megatts::cp_async {

__device__ __forceinline__ void copy16(void* smem, const void* src) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

__device__ __forceinline__ void copy16(void* smem, const void* src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

// copy16() through the L1 (.ca): a second copy of the same line by another warp of the block
// soon after is served there, not by the L2. Only for lines that no other block writes while
// this one may still read them (an L1 line is not updated by other multiprocessors' stores).
__device__ __forceinline__ void copy16_l1(void* smem, const void* src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wait_groups() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

}  // namespace megatts::cp_async

// wgmma: Hopper's warpgroup matrix products (sm_90a) as the vocoder's conv kernels issue
// them (conv_gemm.cuh's wgmma_bf16x3_half, for its tiles and conv_implicit.cuh's): bf16 A from
// registers, bf16 B from shared memory, f32 accumulators, 64 rows by 96, 64 or 32 columns
// by 16 k per instruction.
//
// Contract (device, sm_90a: where MEGATTS_VOC_WGMMA is 1; elsewhere each traps): the four warps
// of a warpgroup (warps 4w..4w+3 of the block) call each function together. A's
// registers are mma.sync's m16n8k16 A fragment for rows 16 (warp % 4) + 0..15 of the
// warpgroup's 64; the accumulators are mma.sync's C fragments of the same rows, one per
// n8 tile (d[4j..4j+3]: tile j). B is K-major, unswizzled: 8 x 8 "core matrices" of
// 128 contiguous bytes (8 columns, each 8 k as 16 bytes), the two of a k16 step
// `k_core_bytes` apart and successive 8-column groups `n_core_bytes` apart. B's shared
// memory, once written with ordinary or cp.async stores, is published to the tensor
// core's reads by publish_shared() in each writing thread before the block barrier; written
// by bulk copies (kernels/common/mbarrier.cuh), it needs only the wait on their barrier.
// mma() only issues: fence() before the first one whose registers were written since,
// then commit() and wait<N>() before the accumulators or A registers are touched again.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MEGATTS_VOC_WGMMA 1
#else
#define MEGATTS_VOC_WGMMA 0
#endif

namespace megatts::voc::wgmma {

inline constexpr int k_core_bytes = 128;  // between the two core matrices of a k16 step (K)

// The shared-memory descriptor of a B operand starting at `at`: no swizzle, core matrices
// k_core_bytes apart in K (leading) and n_core_bytes apart in N (stride).
__device__ __forceinline__ std::uint64_t descriptor(const void* at, int n_core_bytes) {
    const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(at));
    return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
           static_cast<std::uint64_t>(k_core_bytes >> 4) << 16 |
           static_cast<std::uint64_t>(n_core_bytes >> 4) << 32;
}

// Elsewhere they trap: the kernels call them only where MEGATTS_VOC_WGMMA is 1, but a
// template's untaken branch still names them.
#if MEGATTS_VOC_WGMMA
#define MEGATTS_VOC_WGMMA_ASM(...) asm volatile(__VA_ARGS__)
#else
#define MEGATTS_VOC_WGMMA_ASM(...) __trap()
#endif

__device__ __forceinline__ void publish_shared() {
    MEGATTS_VOC_WGMMA_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void fence() { MEGATTS_VOC_WGMMA_ASM("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void commit() { MEGATTS_VOC_WGMMA_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int Pending>
__device__ __forceinline__ void wait() {
    MEGATTS_VOC_WGMMA_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// d += a x b over 64 rows, N columns and 16 k.
template <int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t b);

template <>
__device__ __forceinline__ void mma<96>(float (&d)[48], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_ASM(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "
        "{%48, %49, %50, %51}, %52, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <>
__device__ __forceinline__ void mma<64>(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_ASM(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <>
__device__ __forceinline__ void mma<32>(float (&d)[16], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_ASM(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

#undef MEGATTS_VOC_WGMMA_ASM

}  // namespace megatts::voc::wgmma

// wgmma: Hopper's warpgroup matrix products (sm_90a) as the vocoder's conv kernels issue
// them (conv_gemm.cuh's wgmma_bf16x3_half, for its tiles and conv_implicit.cuh's; and
// conv_implicit.cuh's TF32 steps): A from registers, B from shared memory, f32 accumulators,
// 64 rows by 96, 64 or 32 columns by 16 k (bf16) or 8 k (TF32) per instruction.
//
// Contract (device, sm_90a: where MEGATTS_VOC_WGMMA is 1; elsewhere each traps): the four warps
// of a warpgroup (warps 4w..4w+3 of the block) call each function together. A's
// registers are mma.sync's m16n8k16 A fragment for rows 16 (warp % 4) + 0..15 of the
// warpgroup's 64; the accumulators are mma.sync's C fragments of the same rows, one per
// n8 tile (d[4j..4j+3]: tile j). B is K-major, unswizzled: 8 x 8 "core matrices" of
// 128 contiguous bytes (8 columns, each 8 bf16 or 4 TF32 k as 16 bytes), the two of a step
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

inline constexpr int k_core_bytes = 128;  // between the two core matrices of a step (K)

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

// The accumulator operands of an instruction of 16, 32 or 48 registers a thread, and the
// instruction with them: d, then A's four registers, then B's descriptor (scale-d 1, A and B
// unscaled; bf16 takes B's transpose flag too, 0: K-major).
#define MEGATTS_VOC_D8(i)                                                                                      \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
#define MEGATTS_VOC_D16 MEGATTS_VOC_D8(0), MEGATTS_VOC_D8(8)
#define MEGATTS_VOC_D32 MEGATTS_VOC_D16, MEGATTS_VOC_D8(16), MEGATTS_VOC_D8(24)
#define MEGATTS_VOC_D48 MEGATTS_VOC_D32, MEGATTS_VOC_D8(32), MEGATTS_VOC_D8(40)
#define MEGATTS_VOC_R16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define MEGATTS_VOC_R32 MEGATTS_VOC_R16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define MEGATTS_VOC_R48 MEGATTS_VOC_R32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define MEGATTS_VOC_WGMMA_STEP(SHAPE_TYPES, DREGS, AB_REGS, TAIL, DOPS)                                      \
    MEGATTS_VOC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned." SHAPE_TYPES \
                          " {" DREGS "}, " AB_REGS ", p, 1, 1" TAIL ";\n}\n"                                  \
                          : DOPS                                                                        \
                          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b))

// d += a x b over 64 rows, N columns and 16 k, bf16 operands.
template <int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t b);

template <>
__device__ __forceinline__ void mma<96>(float (&d)[48], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n96k16.f32.bf16.bf16", MEGATTS_VOC_R48, "{%48, %49, %50, %51}, %52", ", 0", MEGATTS_VOC_D48);
}

template <>
__device__ __forceinline__ void mma<64>(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n64k16.f32.bf16.bf16", MEGATTS_VOC_R32, "{%32, %33, %34, %35}, %36", ", 0", MEGATTS_VOC_D32);
}

template <>
__device__ __forceinline__ void mma<32>(float (&d)[16], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n32k16.f32.bf16.bf16", MEGATTS_VOC_R16, "{%16, %17, %18, %19}, %20", ", 0", MEGATTS_VOC_D16);
}

// d += a x b over 64 rows, N columns and 8 k, TF32 operands (f32 registers and words whose
// low 13 mantissa bits the tensor cores ignore: the callers round them first). A's
// registers are mma.sync's m16n8k8 TF32 A fragment (rows g and g + 8, k t and t + 4: a0 (g,
// t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)); B's core matrices are 8 columns by
// 4 k, 16 bytes a column.
template <int N>
__device__ __forceinline__ void mma_tf32(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t b);

template <>
__device__ __forceinline__ void mma_tf32<96>(float (&d)[48], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n96k8.f32.tf32.tf32", MEGATTS_VOC_R48, "{%48, %49, %50, %51}, %52", "", MEGATTS_VOC_D48);
}

template <>
__device__ __forceinline__ void mma_tf32<64>(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n64k8.f32.tf32.tf32", MEGATTS_VOC_R32, "{%32, %33, %34, %35}, %36", "", MEGATTS_VOC_D32);
}

template <>
__device__ __forceinline__ void mma_tf32<32>(float (&d)[16], const std::uint32_t (&a)[4], std::uint64_t b) {
    MEGATTS_VOC_WGMMA_STEP("m64n32k8.f32.tf32.tf32", MEGATTS_VOC_R16, "{%16, %17, %18, %19}, %20", "", MEGATTS_VOC_D16);
}

// x rounded to TF32 (10 mantissa bits), to nearest, ties away from zero, as its f32 bits.
__device__ __forceinline__ std::uint32_t round_tf32(float x) {
    std::uint32_t r;
#if MEGATTS_VOC_WGMMA
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#else
    r = __float_as_uint(x);
    __trap();
#endif
    return r;
}

#undef MEGATTS_VOC_WGMMA_STEP
#undef MEGATTS_VOC_R48
#undef MEGATTS_VOC_R32
#undef MEGATTS_VOC_R16
#undef MEGATTS_VOC_D48
#undef MEGATTS_VOC_D32
#undef MEGATTS_VOC_D16
#undef MEGATTS_VOC_D8
#undef MEGATTS_VOC_WGMMA_ASM

}  // namespace megatts::voc::wgmma

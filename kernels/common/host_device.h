// host_device: MEGATTS_HD marks a function that host and device code both call (pure
// arithmetic the CPU tests check and a kernel runs): __host__ __device__ under nvcc, a
// plain inline function in the C++ that CI's unit tests compile.
//
// Contract: header-only; defines MEGATTS_HD and nothing else.
#pragma once

#if defined(__CUDACC__)
#define MEGATTS_HD __host__ __device__ __forceinline__
#else
#define MEGATTS_HD inline
#endif

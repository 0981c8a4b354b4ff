// view_addressing: where a row of an act_view (device_views.h) lives.
//
// Contract: view_row() is the row of item `i`'s r-th row at a stage of n rows per
// frame, for writing or for reading the current frame (never masked); ring rows of
// times before 0 are for history reads only, which go through history_row(). Both
// are pure. On the device, activations written by an earlier kernel of the
// same call are read with ld.global.cg (load_cg): with programmatic launch a kernel
// starts while its predecessor runs, and the L2 is the level every SM sees
// coherently; weights, which never change, through the read-only path (load_const).
#pragma once

#include "kernels/vocoder/device_views.h"

namespace megatts::voc {

__host__ __device__ inline float* view_row(const act_view& v, const item_desc& it, int i, int n, int r) {
    if (v.ring_rows == 0) return v.data + (static_cast<long>(i) * n + r) * v.width;
    const long t = static_cast<long>(it.frame) * n + r;
    return v.data + it.slot * v.slot_stride + (t % v.ring_rows) * v.width;
}

// Time t of a ring (t >= 0), or null for the zero padding before a session's start.
__host__ __device__ inline const float* history_row(const act_view& v, int slot, long t) {
    if (t < 0) return nullptr;
    return v.data + slot * v.slot_stride + (t % v.ring_rows) * v.width;
}

__host__ __device__ inline float load_cg(const float* p) {
#ifdef __CUDA_ARCH__
    return __ldcg(p);
#else
    return *p;
#endif
}

__host__ __device__ inline float load_const(const float* p) {
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}

__device__ __forceinline__ float4 load_cg4(const float* p) { return __ldcg(reinterpret_cast<const float4*>(p)); }

}  // namespace megatts::voc

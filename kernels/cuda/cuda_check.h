// cuda_check: a CUDA runtime call's failure as a named error value with file:line.
//
// Contract: host code only (a .cu translation unit or any file that includes
// <cuda_runtime.h>). CUDA_TRY(call) returns make_error(unavailable, "CUDA <call>
// failed at <file>:<line>: <name>: <text>") from the enclosing function, which must
// return result<...>; cuda_error() builds the same error for paths that cannot
// return at once (they record it first). Nothing aborts or throws.
#pragma once

#include <string>

#include <cuda_runtime.h>

#include "kernels/common/result.h"

namespace megatts {

inline error cuda_error(cudaError_t e, const char* what, const char* file, int line) {
    return make_error(error_kind::unavailable, std::string("CUDA ") + what + " failed at " + file + ":" +
                                                   std::to_string(line) + ": " + cudaGetErrorName(e) + ": " +
                                                   cudaGetErrorString(e));
}

}  // namespace megatts

#define CUDA_TRY(call)                                                                         \
    do {                                                                                       \
        const cudaError_t cuda_try_e_ = (call);                                                \
        if (cuda_try_e_ != cudaSuccess) return ::megatts::cuda_error(cuda_try_e_, #call, __FILE__, __LINE__); \
    } while (0)

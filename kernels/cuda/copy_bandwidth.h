// copy_bandwidth: the memory ceiling of this GPU, measured: a large device-to-device
// copy timed with CUDA events, counting bytes read plus bytes written (METHOD.md).
//
// Contract: allocates 2 x `bytes` of device memory for the measurement and frees it;
// returns the median of `repeats` copies in GB/s (1e9 bytes per second). Blocking.
// Errors: unavailable (no CUDA, out of memory), naming the failing call.
#pragma once

#include <cstddef>

#include "kernels/common/result.h"

namespace megatts {

result<double> measure_copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace megatts

#include "tests/gpu/device_trap.h"

#include <cuda_runtime.h>

namespace megatts::test {
namespace {

__global__ void trap_kernel() { __trap(); }

}  // namespace

std::string trap_device() {
    trap_kernel<<<1, 1>>>();
    const cudaError_t launched = cudaGetLastError();
    const cudaError_t finished = launched != cudaSuccess ? launched : cudaDeviceSynchronize();
    return finished == cudaSuccess ? "none" : cudaGetErrorName(finished);
}

}  // namespace megatts::test

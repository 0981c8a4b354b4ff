#include "kernels/cuda/cuda_probe.h"

#include <cuda_runtime.h>

namespace megatts {
namespace {

// Exists only so cudaFuncGetAttributes can tell whether this binary carries code for
// a device's architecture.
__global__ void probe_kernel() {}

std::string cuda_error_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

}  // namespace

cuda_report probe_cuda() {
    cuda_report r;
    r.built_with_cuda = true;
    r.compiled_archs = MEGATTS_CUDA_ARCHS;
    cudaDriverGetVersion(&r.driver_version);
    cudaRuntimeGetVersion(&r.runtime_version);
    if (r.driver_version == 0) {
        r.problem = "no NVIDIA driver is loaded";
        return r;
    }
    if (r.driver_version < r.runtime_version) {
        r.problem = "the NVIDIA driver supports CUDA " + format_cuda_version(r.driver_version) +
                    " but this binary needs " + format_cuda_version(r.runtime_version) + "; update the driver";
        return r;
    }
    int count = 0;
    if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        r.problem = cuda_error_text(e);
        return r;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp p{};
        if (auto e = cudaGetDeviceProperties(&p, i); e != cudaSuccess) {
            r.problem = "device " + std::to_string(i) + ": " + cuda_error_text(e);
            continue;
        }
        cuda_device_info d;
        d.index = i;
        d.name = p.name;
        d.cc_major = p.major;
        d.cc_minor = p.minor;
        d.total_memory = p.totalGlobalMem;
        d.sm_count = p.multiProcessorCount;
        d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
        if (cudaSetDevice(i) == cudaSuccess) {
            cudaMemGetInfo(&d.free_memory, &d.total_memory);
            cudaFuncAttributes attr{};
            d.has_kernel_image = cudaFuncGetAttributes(&attr, probe_kernel) == cudaSuccess;
            cudaGetLastError();  // clear a sticky "no kernel image" for the next device
        }
        r.devices.push_back(std::move(d));
    }
    if (r.devices.empty() && r.problem.empty()) r.problem = "the driver reports no CUDA devices";
    return r;
}

}  // namespace megatts

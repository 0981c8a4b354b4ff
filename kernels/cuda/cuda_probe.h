// cuda_probe: what CUDA can do on this machine for megatts: driver and runtime
// versions, each device (name, compute capability, memory, SMs, L2) and whether this
// binary carries a kernel image that runs on it.
//
// Contract: probe_cuda() never throws and never aborts; on a machine without a GPU or
// driver it returns a report whose `problem` says so plainly. A build without CUDA
// returns built_with_cuda = false. usable_device() names the reason a device cannot
// serve (the daemon refuses to start with it; nothing falls back to the CPU).
// Blocking (creates a CUDA context on first use); call once at start-up.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

struct cuda_device_info {
    int index = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    std::size_t total_memory = 0, free_memory = 0;
    int sm_count = 0;
    std::size_t l2_bytes = 0;
    bool has_kernel_image = false;  // this binary has code for its architecture
};

struct cuda_report {
    bool built_with_cuda = false;
    std::string compiled_archs;   // e.g. "sm_90a sm_120a"
    int driver_version = 0;       // CUDA_VERSION style: 13000 = 13.0; 0 = no driver
    int runtime_version = 0;
    std::vector<cuda_device_info> devices;
    std::string problem;          // empty when at least one device is usable
};

cuda_report probe_cuda();

// The device to run on, or the exact reason CUDA is unusable here.
result<cuda_device_info> usable_device(const cuda_report& report, int index);

std::string format_cuda_version(int version);

}  // namespace megatts

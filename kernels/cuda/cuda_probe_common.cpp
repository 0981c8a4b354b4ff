#include "kernels/cuda/cuda_probe.h"

namespace megatts {

std::string format_cuda_version(int version) {
    if (version <= 0) return "none";
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

result<cuda_device_info> usable_device(const cuda_report& r, int index) {
    if (!r.built_with_cuda)
        return make_error(error_kind::unavailable, "this megatts was built without CUDA (meson -Dcuda=disabled); "
                                                   "use --backend cpu or rebuild with the CUDA toolkit");
    if (r.devices.empty())
        return make_error(error_kind::unavailable, "no CUDA device: " + (r.problem.empty() ? "none found" : r.problem));
    if (index < 0 || index >= static_cast<int>(r.devices.size()))
        return make_error(error_kind::unavailable, "CUDA device " + std::to_string(index) + " does not exist (" +
                                                       std::to_string(r.devices.size()) + " found)");
    const auto& d = r.devices[static_cast<std::size_t>(index)];
    if (!d.has_kernel_image)
        return make_error(error_kind::unavailable,
                          "CUDA device " + std::to_string(index) + " (" + d.name + ", sm_" +
                              std::to_string(d.cc_major) + std::to_string(d.cc_minor) +
                              ") has no kernel image in this binary (built for " + r.compiled_archs + ")");
    return d;
}

}  // namespace megatts

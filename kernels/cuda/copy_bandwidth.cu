#include "kernels/cuda/copy_bandwidth.h"

#include <algorithm>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace megatts {
namespace {

error failed(cudaError_t e, const char* what) {
    return make_error(error_kind::unavailable, std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

result<double> measure_copy_bandwidth(std::size_t bytes, int repeats) {
    void *a = nullptr, *b = nullptr;
    if (auto e = cudaMalloc(&a, bytes); e != cudaSuccess) return failed(e, "cudaMalloc");
    if (auto e = cudaMalloc(&b, bytes); e != cudaSuccess) {
        cudaFree(a);
        return failed(e, "cudaMalloc");
    }
    cudaMemset(a, 1, bytes);  // never time copies of never-written memory
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> ms;
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < repeats + 2 && err == cudaSuccess; ++i) {
        cudaEventRecord(start);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(stop);
        err = cudaEventSynchronize(stop);
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        if (i >= 2) ms.push_back(t);  // two warm-up copies
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    if (err != cudaSuccess) return failed(err, "device-to-device copy");
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    const double median_s = ms[ms.size() / 2] / 1e3;
    return 2.0 * static_cast<double>(bytes) / median_s / 1e9;
}

}  // namespace megatts

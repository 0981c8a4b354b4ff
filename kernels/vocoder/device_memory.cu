#include "kernels/vocoder/device_memory.h"

#include "kernels/cuda/cuda_check.h"

namespace megatts::voc {

device_memory::~device_memory() {
    for (void* p : blocks_) cudaFree(p);
}

result<void*> device_memory::raw(std::size_t bytes) {
    void* p = nullptr;
    CUDA_TRY(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
    blocks_.push_back(p);
    bytes_ += bytes;
    return p;
}

result<float*> device_memory::zeros(std::size_t floats) {
    auto p = raw(floats * sizeof(float));
    if (!p) return p.err();
    CUDA_TRY(cudaMemset(*p, 0, floats * sizeof(float)));
    return static_cast<float*>(*p);
}

result<void*> device_memory::copy(const void* data, std::size_t bytes) {
    auto p = raw(bytes);
    if (!p) return p.err();
    CUDA_TRY(cudaMemcpy(*p, data, bytes, cudaMemcpyHostToDevice));
    return *p;
}

}  // namespace megatts::voc

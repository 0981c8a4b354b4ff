// device_memory: a set of device allocations owned together (the vocoder's weights,
// or its state and scratch), freed when the owner goes.
//
// Contract: every allocation is a separate cudaMalloc (256-byte aligned), zeroed on
// request. Errors: unavailable, naming the call and file:line (out of memory is the
// usual one). Host code, the engine thread; not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::voc {

class device_memory {
public:
    device_memory() = default;
    ~device_memory();
    device_memory(const device_memory&) = delete;
    device_memory& operator=(const device_memory&) = delete;

    result<float*> zeros(std::size_t floats);
    result<void*> copy(const void* data, std::size_t bytes);
    result<void*> raw(std::size_t bytes);

    std::size_t bytes() const { return bytes_; }

private:
    std::vector<void*> blocks_;
    std::size_t bytes_ = 0;
};

}  // namespace megatts::voc

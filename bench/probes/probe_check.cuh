// probe_check: CHECK(call) for a probe's host code: where a CUDA runtime call fails, prints
// the call and the error's name and returns 1 from the enclosing function (main, or a
// function whose int result main returns).
// A measurement tool's helper, not part of the product (bench/README.md).
#pragma once

#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(x)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                               \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

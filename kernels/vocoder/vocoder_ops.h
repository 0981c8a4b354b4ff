// vocoder_ops: one kernel launch of a vocoder call, as data: which kernel, its
// parameters and grid. A call is a fixed list of ops per batch bucket
// (vocoder_program), launched in order on one stream, directly or as a CUDA graph.
//
// Contract: launch_op() enqueues the op (it does not wait); `programmatic` asks for
// programmatic dependent launch on the previous kernel of the stream (never for the
// first kernel after a copy). prepare_vocoder_kernels() raises the kernels' dynamic
// shared memory limits; call it once per device before the first launch. Both return
// the CUDA error of the launch, for the caller to report with its file and line.
// Host code of the engine thread only.
#pragma once

#include <variant>

#include <cuda_runtime.h>

#include "kernels/vocoder/gemm_params.h"
#include "kernels/vocoder/gemm_shape.h"
#include "kernels/vocoder/kernel_params.h"

namespace megatts::voc {

struct gather_op {
    gather_params params;
    dim3 grid;
};

struct gemm_op {
    gemm_params params;
    gemm_shape shape;
    dim3 grid;
};

struct attention_op {
    attention_params params;
    dim3 grid;
    int smem_bytes;
};

struct norm_op {
    convnext_norm_params params;
    dim3 grid;
};

struct output_op {
    output_conv_params params;
    dim3 grid;
};

using vocoder_op = std::variant<gather_op, gemm_op, attention_op, norm_op, output_op>;

cudaError_t launch_op(const vocoder_op& op, cudaStream_t stream, bool programmatic);

cudaError_t prepare_vocoder_kernels();

}  // namespace megatts::voc

// vocoder_ops: one kernel launch of a vocoder call, as data: which kernel, its
// parameters and grid. A call is a fixed list of ops per batch bucket
// (vocoder_program), launched in order on one stream, directly or as a CUDA graph.
//
// Contract: launch_op() enqueues the op (it does not wait); `programmatic` asks for
// programmatic dependent launch on the previous kernel of the stream (never for the
// first kernel after a copy). prepare_vocoder_kernels() raises the kernels' dynamic
// shared memory limits; call it once per device before the first launch. It sets
// `implicit_smem` to the dynamic shared memory an implicit conv (conv_implicit.cuh) may
// take (at most k_implicit_smem_bytes, less where the device allows less), and
// `stack_smem` to the dynamic shared memory a frame stack may take on this device with
// a block on every multiprocessor (its barrier needs them all co-resident): at most
// k_stack_smem_bytes, less where the device allows less (sm_120: 99 KB a block), 0
// where no frame stack fits. Both return
// the CUDA error of the launch, for the caller to report with its file and line.
// Host code of the engine thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <variant>

#include <cuda_runtime.h>

#include "kernels/vocoder/frame_stack_params.h"
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
    int smem_bytes;  // dynamic shared memory: the shape's, or the implicit kernel's for its staged rows
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

// The frame-rate transformer in one launch (frame_stack.cuh). The parameters are large
// (18 KB), so ops share them rather than copy them.
struct stack_op {
    std::shared_ptr<frame_stack_params> params;
    std::size_t barrier;  // index of the barrier's two counters in the program's counters
    dim3 grid;
    int smem_bytes;
};

using vocoder_op = std::variant<gather_op, gemm_op, attention_op, norm_op, output_op, stack_op>;

cudaError_t launch_op(const vocoder_op& op, cudaStream_t stream, bool programmatic);

// How many clusters of 1 x 1 x `cluster_z` blocks of the kernel the op runs in clusters
// (its split_sums::cluster instantiation, with its threads and dynamic shared memory) the
// current device holds at once; 0 where it holds none or has no clusters of that size.
// After prepare_vocoder_kernels().
int resident_clusters(const gemm_op& op, int cluster_z);

// Most products stage few enough rows for two blocks a multiprocessor (228 KB on sm_90, 1 KB
// of it reserved per block); those that stage more (a 128-row tile of short sessions stages
// each one's left context: 32 sessions of 4 rows, or 4 of 32 rows at dilation 9) run one
// block a multiprocessor, still faster than conv_gemm's two (an H100 at B = 64: the first
// decoder conv 109 -> 82 us, the first block's dilation-9 conv 234 -> 196).
inline constexpr int k_implicit_smem_bytes = 200 * 1024;

cudaError_t prepare_vocoder_kernels(int& stack_smem, int& implicit_smem);

}  // namespace megatts::voc

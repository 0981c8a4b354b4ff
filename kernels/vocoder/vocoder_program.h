// vocoder_program: the fixed list of kernel launches (vocoder_ops.h) that decodes one
// frame for every item of a call, built once per batch bucket: ~83 launches at full
// size (a gather, 71 matrix products with their elementwise tails fused, 8
// attentions, 2 ConvNeXt norms, the output conv). With `stack_smem` > 0 (what
// prepare_vocoder_kernels() found), a bucket of up to k_stack_max_items lays the
// frame-rate transformer (input projection to output projection: 42 products and 8
// attentions) out as one persistent launch instead (frame_stack.cuh), when every one
// of its products can run there and its shared memory is within stack_smem. With
// `implicit_smem` > 0, the convs with several taps whose tiles have 64 rows or more run as
// implicit GEMMs (conv_implicit.cuh) where their staging fits in implicit_smem.
//
// Contract: build_program() lays the ops out for calls of up to `bucket` items on a
// GPU with `r.sms` multiprocessors: it picks each product's tile shape and split-K
// from its rows (bucket x rows per frame), width and weight size, so that small
// batches still keep every multiprocessor busy (smaller tiles first, then split K)
// and spread their weight streaming over the whole GPU; a call with fewer items runs
// the same grids and the blocks past its rows return at once. The program reads the batch
// description and the buffers' addresses, not their contents, so one program serves
// every call of its bucket (and can be captured as a CUDA graph). bind_scratch()
// gives the split-K products their workspace and counters, and a frame stack its
// barrier: at least workspace_floats floats and `counters` zeroed counters, shared by
// all programs (their launches never overlap). Errors: invalid_input for a layer the kernels
// cannot run (a ConvTranspose whose kernel is not its stride where it reads a flat
// tensor). Host code, engine thread; its only CUDA calls ask how many clusters of a kernel
// fit on the device (resident_clusters()).
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/vocoder/device_weights.h"
#include "kernels/vocoder/vocoder_buffers.h"
#include "kernels/vocoder/vocoder_ops.h"

namespace megatts::voc {

struct vocoder_program {
    int bucket = 0;
    std::vector<vocoder_op> ops;
    std::size_t workspace_floats = 0;
    std::size_t counters = 0;
};

// What a program may use on the device: its multiprocessors, the shared memory a frame
// stack and an implicit conv may have (prepare_vocoder_kernels(); 0: none), and whether
// split K may add its partial tiles within clusters (false: always through the workspace,
// the same bits; for compute-sanitizer's racecheck, which fails on those clusters, and to
// measure what they save).
struct program_resources {
    int sms = 0;
    int stack_smem = 0;
    int implicit_smem = 0;
    bool cluster_sum = true;
};

result<vocoder_program> build_program(const device_weights& w, const vocoder_buffers& b, int bucket,
                                      const program_resources& r);

void bind_scratch(vocoder_program& p, float* workspace, unsigned int* counters);

}  // namespace megatts::voc

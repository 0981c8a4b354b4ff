// frame_vocoder: where an utterance's samples come from, one frame of codes at a time: the
// CPU reference vocoder stream or the CUDA vocoder behind one interface, so `megatts say`
// runs the whole model on the backend it names (never the CPU behind a cuda flag).
//
// Contract: decode() takes one frame's codes (num_quantizers values, each in
// [0, codebook_size)) in utterance order and gives that frame's samples (1920 at full size,
// 24 kHz, clamped to [-1, 1]); the vocoder keeps the causal state between calls, so frame by
// frame equals the whole utterance at once. One utterance per frame_vocoder. Blocking; one
// thread at a time. Errors are values (codes out of range, a CUDA failure).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts {

class frame_vocoder {
public:
    virtual ~frame_vocoder() = default;
    virtual result<std::vector<float>> decode(std::span<const std::int32_t> codes) = 0;
};

// The CPU reference (kernels/reference/vocoder/vocoder_stream.h); the weights must outlive it.
std::unique_ptr<frame_vocoder> make_reference_frame_vocoder(const ref::vocoder_weights& weights);

}  // namespace megatts

// sampler_probe: the megakernel's device sampler (mk::sample_token as the code predictor calls
// it: no talker processors) run on logits the caller crafts, one block a row, so that the gpu
// suite can hold it to the CPU reference (ref::choose_token) where model logits never go: ties
// at the top-k threshold, more than k_ranked scores near the top, fewer finite scores than top_k.
//
// Contract: a test helper; host code, on the thread that uses the process's CUDA context.
// `logits` holds `rows` rows of n scores (n in 1..mk::k_max_vocab, 3072), `uniforms` one draw in
// [0, 1) a row; top_k in 1..mk::k_max_top_k (64) unless greedy. Returns each row's token once the
// device is done, or an error: invalid_input for arguments outside that, unavailable naming the
// CUDA call that failed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/sampler.h"

namespace megatts::test {

result<std::vector<std::int32_t>> sample_on_device(std::span<const float> logits, int rows, int n,
                                                   const ref::sampling_params& p, std::span<const float> uniforms);

}  // namespace megatts::test

// reference_model: everything the CPU reference backend needs for one checkpoint,
// loaded once: the validated checkpoint, the tokenizer and the f32 weights of the
// talker, code predictor and vocoder.
//
// Contract: load() blocks (seconds at full size) and fails with the first error of
// the checkpoint, tokenizer or weight conversion, naming the file. The result is
// read-only: any number of utterances on any threads may share it.
#pragma once

#include <string>

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_weights.h"
#include "kernels/reference/weights.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/text/bpe_tokenizer.h"

namespace megatts {

struct reference_model {
    checkpoint ckpt;
    bpe_tokenizer tokenizer;
    ref::talker_weights talker;
    ref::code_predictor_weights code_predictor;
    ref::vocoder_weights vocoder;

    // with_reference_weights = false skips the f32 talker and code-predictor copies
    // (the CUDA backend reads the bf16 checkpoint instead); talker/code_predictor are
    // then empty.
    static result<reference_model> load(const std::string& dir, bool with_reference_weights = true);
    const model_config& config() const { return ckpt.config(); }
};

}  // namespace megatts

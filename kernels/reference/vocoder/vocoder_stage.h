// vocoder_stage: the named intermediates of the speech-tokenizer decoder, as a stream
// reports them to an observer (golden diffs, debugging).
//
// Contract: an observer is called synchronously on the decoding thread, once per
// stage per internal pass, with that pass's new rows only: concatenating the calls
// of one stage and index in order gives the stage's whole-utterance tensor. Values
// are time-major ([rows][channels]) and valid only during the call. The stages
// follow the official module names: quantizer, pre_conv, pre_transformer.input_proj,
// pre_transformer.layers.i, pre_transformer (after norm and output_proj),
// upsample.k, decoder.0, decoder.b (b = 1..4), and the clamped output.
#pragma once

#include <functional>
#include <span>

namespace megatts::ref {

enum class vocoder_stage {
    dequant, pre_conv, pt_input_proj, pt_layer, pre_transformer, upsample, decoder0, block, audio,
};

struct vocoder_stage_output {
    vocoder_stage stage = vocoder_stage::dequant;
    int index = 0;  // pt_layer: layer; upsample: 0..1; block: 1..4; otherwise 0
    int channels = 0;
    std::span<const float> values;
};

using vocoder_observer = std::function<void(const vocoder_stage_output&)>;

}  // namespace megatts::ref

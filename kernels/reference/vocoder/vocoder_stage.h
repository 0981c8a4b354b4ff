// vocoder_stage: the named intermediates of the speech-tokenizer decoder, as a stream
// reports them to an observer (golden diffs, debugging).
//
// Contract: an observer is called synchronously on the decoding thread, once per
// stage per internal pass, with that pass's new rows only: concatenating the calls
// of one stage and index in order gives the stage's whole-utterance tensor. Values
// are time-major ([rows][channels]) and valid only during the call.
// vocoder_stage_name() gives each stage the official decoder's module name, so a
// dump lines up with the official modules' outputs without a lookup table.
#pragma once

#include <functional>
#include <span>
#include <string>

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

// The official module name of a stage ("pre_transformer.layers.1", "decoder.3", ...);
// the clamped output is "audio".
std::string vocoder_stage_name(vocoder_stage stage, int index);

}  // namespace megatts::ref

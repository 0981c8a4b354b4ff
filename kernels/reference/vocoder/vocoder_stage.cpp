#include "kernels/reference/vocoder/vocoder_stage.h"

namespace megatts::ref {

std::string vocoder_stage_name(vocoder_stage stage, int index) {
    const std::string i = std::to_string(index);
    switch (stage) {
    case vocoder_stage::dequant: return "quantizer";
    case vocoder_stage::pre_conv: return "pre_conv";
    case vocoder_stage::pt_input_proj: return "pre_transformer.input_proj";
    case vocoder_stage::pt_layer: return "pre_transformer.layers." + i;
    case vocoder_stage::pre_transformer: return "pre_transformer";
    case vocoder_stage::upsample: return "upsample." + i;
    case vocoder_stage::decoder0: return "decoder.0";
    case vocoder_stage::block: return "decoder." + i;
    case vocoder_stage::audio: return "audio";
    }
    return "unknown";
}

}  // namespace megatts::ref

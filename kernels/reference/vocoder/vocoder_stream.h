// vocoder_stream: the fp32 reference of the speech-tokenizer decoder ("vocoder") for
// one utterance, decoding codec frames into 24 kHz samples as they arrive.
//
// Contract: decode(codes, frames) takes the utterance's next `frames` frames, codes
// laid out [frames][num_quantizers], and returns frames * samples_per_frame samples
// in [-1, 1]. The stream carries every causal state between calls (pre_conv and
// every conv's left context, the transformer's sliding-window keys and values and
// its position, the transposed convs' previous input rows), so decoding an
// utterance in any split into calls gives the samples of one pass over the whole
// (the official decoder with no chunking). An observer, if set, receives every
// named intermediate (vocoder_stage.h). Errors: invalid_input when codes.size() is
// not frames * num_quantizers or a code is outside [0, codebook_size); nothing is
// decoded and the state is unchanged then. The weights must outlive the stream.
// Single-threaded: one stream per utterance, used by one thread at a time; any
// number of streams may share one vocoder_weights. Blocking CPU work: about 0.3 s
// of one core per frame at full size, so not real time.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/causal_conv.h"
#include "kernels/reference/vocoder/convnext_upsampler.h"
#include "kernels/reference/vocoder/decoder_block.h"
#include "kernels/reference/vocoder/pre_transformer.h"
#include "kernels/reference/vocoder/vocoder_stage.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts::ref {

class vocoder_stream {
public:
    explicit vocoder_stream(const vocoder_weights& w);

    result<std::vector<float>> decode(std::span<const std::int32_t> codes, int frames);

    void set_observer(vocoder_observer observer) { observer_ = std::move(observer); }
    int frames_decoded() const { return frames_decoded_; }

private:
    result<void> check(std::span<const std::int32_t> codes, int frames) const;
    void decode_pass(std::span<const std::int32_t> codes, int frames, std::vector<float>& pcm);
    std::span<const float> dequantize(std::span<const std::int32_t> codes, int frames);
    void emit(vocoder_stage stage, int index, int channels, std::span<const float> values) const;

    const vocoder_weights* w_;
    vocoder_observer observer_;
    causal_conv pre_conv_;
    pre_transformer pre_transformer_;
    std::vector<convnext_upsampler> upsamplers_;
    causal_conv decoder0_;
    std::vector<decoder_block> blocks_;
    causal_conv final_conv_;
    std::vector<float> codebook_sums_, dequant_, final_act_;
    int frames_decoded_ = 0;
};

}  // namespace megatts::ref

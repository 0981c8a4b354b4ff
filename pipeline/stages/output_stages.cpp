#include "pipeline/stages/output_stages.h"

#include <utility>

#include "pipeline/audio/sample_rates.h"
#include "pipeline/stages/opus_encode_stage.h"
#include "pipeline/stages/pcm16_encode_stage.h"
#include "pipeline/stages/resample_stage.h"

namespace megatts {

result<output_stages> make_output_stages(const utterance_options& options,
                                         std::shared_ptr<opus_encoder_pool> encoders) {
    output_stages out;
    if (options.format == audio_format::opus) {
        auto encoder = opus_packet_encoder::create({.frame_ms = options.opus_frame_ms}, std::move(encoders));
        if (!encoder) return encoder.err();
        out.sample_rate = vocoder_sample_rate;
        out.opus_pre_skip = encoder->pre_skip();
        out.piece_samples = encoder->frame_samples();
        out.stages.push_back(std::make_unique<opus_encode_stage>(std::move(encoder.value())));
        return out;
    }
    out.sample_rate = options.sample_rate;
    if (options.sample_rate != vocoder_sample_rate) {
        auto converter = resampler::create(options.sample_rate);
        if (!converter) return converter.err();
        out.stages.push_back(std::make_unique<resample_stage>(std::move(converter.value())));
    }
    out.stages.push_back(std::make_unique<pcm16_encode_stage>());
    return out;
}

}  // namespace megatts

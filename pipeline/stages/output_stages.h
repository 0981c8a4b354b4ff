// output_stages: the stages between the vocoder and the transport for one utterance's output
// format (DESIGN.md §1): [resample, only when a PCM rate other than 24 kHz was asked for] then
// Opus encode or PCM16 encode.
//
// Contract: make_output_stages() builds fresh stages for one utterance (an Opus stream starts
// at sample 0 with its own pre-skip), its Opus encoder from `encoders` when one is idle there
// (opus_encoder_pool.h). Any thread. Errors: the encoder's or resampler's create() errors (the
// options were checked before: a failure here is internal).
#pragma once

#include <memory>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/opus_encoder_pool.h"
#include "pipeline/graph/stage.h"
#include "pipeline/session/utterance_options.h"

namespace megatts {

struct output_stages {
    std::vector<std::unique_ptr<stage>> stages;
    int sample_rate = 0;    // of the chunks the transport gets
    int opus_pre_skip = 0;  // opus: the OpusHead pre-skip, 48 kHz samples
    // PCM samples at the vocoder's rate that make one packet (opus: one Opus frame), the size
    // of block a session feeds the stages so that each packet leaves as soon as it is encoded;
    // 0: whole blocks (PCM output costs next to nothing to encode).
    int piece_samples = 0;
};

result<output_stages> make_output_stages(const utterance_options& options,
                                         std::shared_ptr<opus_encoder_pool> encoders = nullptr);

}  // namespace megatts

// resample_stage: converts the vocoder's 24 kHz PCM to the rate a PCM client asked for
// (resampler.h). The session inserts it only when that rate is not 24 kHz.
//
// In: pcm_block at 24 kHz (data), end_of_audio (control). Out: pcm_block at the output rate
// (none while the filter holds everything back); on end_of_audio the held-back tail, then
// end_of_audio. A libsamplerate failure emits an error_report (internal). Other frames pass
// unchanged. Thread, blocking, cancel: as stage.h.
#pragma once

#include <cstdint>

#include "pipeline/audio/resampler.h"
#include "pipeline/graph/stage.h"

namespace megatts {

class resample_stage final : public stage {
public:
    explicit resample_stage(resampler converter);

    std::string_view name() const override { return "resample"; }
    void process(frame f, frame_emitter& out) override;

private:
    void emit_block(const frame_header& header, std::vector<float> samples, frame_emitter& out);

    resampler converter_;
    std::int64_t next_sample_ = 0;  // output-rate index of the next sample emitted
};

}  // namespace megatts

// opus_encode_stage: codes the utterance's 24 kHz PCM into raw Opus packets of 20 or 10 ms
// (opus_packet_encoder.h), each emitted as soon as its frame is complete.
//
// In: pcm_block at 24 kHz (data), end_of_audio (control). Out: opus_packet_frame (data), one
// per packet; on end_of_audio the packets that flush the encoder (padded with silence, so a
// decoder outputs every real sample), then end_of_audio. A libopus failure emits an
// error_report (internal). Other frames pass unchanged. Thread, blocking, cancel: as stage.h.
#pragma once

#include <vector>

#include "pipeline/audio/opus_packet_encoder.h"
#include "pipeline/graph/stage.h"

namespace megatts {

class opus_encode_stage final : public stage {
public:
    explicit opus_encode_stage(opus_packet_encoder encoder);

    std::string_view name() const override { return "opus_encode"; }
    void process(frame f, frame_emitter& out) override;

private:
    opus_packet_encoder encoder_;
};

}  // namespace megatts

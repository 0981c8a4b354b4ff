// pcm16_encode_stage: turns float PCM into the little-endian signed 16-bit samples of the
// `pcm16` output format (the WAV writer's conversion: clipped, scaled by 32767, rounded).
//
// In: pcm_block (data) at any rate. Out: pcm16_block (data), one per non-empty block. Other
// frames pass unchanged. Thread, blocking, cancel: as stage.h. No state, no errors.
#pragma once

#include "pipeline/graph/stage.h"

namespace megatts {

class pcm16_encode_stage final : public stage {
public:
    std::string_view name() const override { return "pcm16_encode"; }
    void process(frame f, frame_emitter& out) override;
};

}  // namespace megatts

#include "pipeline/stages/pcm16_encode_stage.h"

#include <utility>

#include "pipeline/audio/wav_writer.h"

namespace megatts {

void pcm16_encode_stage::process(frame f, frame_emitter& out) {
    auto* block = std::get_if<pcm_block>(&f.payload);
    if (!block) {
        out.emit(std::move(f));
        return;
    }
    if (block->samples.empty()) return;
    pcm16_block encoded{{}, block->sample_rate, block->first_sample};
    append_wav_samples(block->samples, wav_sample_format::pcm16, encoded.bytes);
    frame_header h = f.header;
    h.created = std::chrono::steady_clock::now();
    out.emit(frame{h, std::move(encoded)});
}

}  // namespace megatts

#include "pipeline/stages/opus_encode_stage.h"

#include <utility>

namespace megatts {

opus_encode_stage::opus_encode_stage(opus_packet_encoder encoder) : encoder_(std::move(encoder)) {}

void opus_encode_stage::process(frame f, frame_emitter& out) {
    result<std::vector<opus_packet>> packets = std::vector<opus_packet>{};
    if (auto* block = std::get_if<pcm_block>(&f.payload)) {
        packets = encoder_.push(block->samples);
    } else if (std::holds_alternative<end_of_audio>(f.payload)) {
        packets = encoder_.flush();
    } else {
        out.emit(std::move(f));
        return;
    }
    if (!packets) {
        out.emit(frame{f.header, error_report{{session_errc::internal, "opus: " + packets.err().message}}});
        return;
    }
    frame_header h = f.header;
    h.created = std::chrono::steady_clock::now();
    for (auto& packet : *packets) out.emit(frame{h, opus_packet_frame{std::move(packet), encoder_.frame_samples()}});
    if (std::holds_alternative<end_of_audio>(f.payload)) out.emit(std::move(f));
}

}  // namespace megatts

#include "pipeline/stages/resample_stage.h"

#include <utility>
#include <vector>

namespace megatts {

resample_stage::resample_stage(resampler converter) : converter_(std::move(converter)) {}

void resample_stage::process(frame f, frame_emitter& out) {
    result<std::vector<float>> converted = std::vector<float>{};
    if (auto* block = std::get_if<pcm_block>(&f.payload)) {
        converted = converter_.process(block->samples);
    } else if (std::holds_alternative<end_of_audio>(f.payload)) {
        converted = converter_.flush();
    } else {
        out.emit(std::move(f));
        return;
    }
    if (!converted) {
        out.emit(frame{f.header, error_report{{session_errc::internal, "resample: " + converted.err().message}}});
        return;
    }
    emit_block(f.header, std::move(converted.value()), out);
    if (std::holds_alternative<end_of_audio>(f.payload)) out.emit(std::move(f));
}

void resample_stage::emit_block(const frame_header& header, std::vector<float> samples, frame_emitter& out) {
    if (samples.empty()) return;
    frame_header h = header;
    h.created = std::chrono::steady_clock::now();
    const auto count = static_cast<std::int64_t>(samples.size());
    out.emit(frame{h, pcm_block{std::move(samples), converter_.output_rate(), next_sample_}});
    next_sample_ += count;
}

}  // namespace megatts

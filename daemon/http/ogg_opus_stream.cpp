#include "daemon/http/ogg_opus_stream.h"

#include "pipeline/audio/sample_rates.h"

namespace megatts {

result<ogg_opus_stream> ogg_opus_stream::create(int pre_skip, int frame_samples, int page_duration_ms) {
    auto writer = ogg_opus_writer::create(pre_skip, {.page_duration_ms = page_duration_ms});
    if (!writer) return writer.err();
    if (frame_samples <= 0) return make_error(error_kind::invalid_input, "ogg opus stream: frame size must be positive");
    const int lookahead = pre_skip * vocoder_sample_rate / opus_granule_rate;
    return ogg_opus_stream(std::move(*writer), lookahead, frame_samples);
}

ogg_opus_stream::ogg_opus_stream(ogg_opus_writer writer, int lookahead, int frame_samples)
    : writer_(std::move(writer)), lookahead_(lookahead), frame_samples_(frame_samples) {}

result<std::vector<std::uint8_t>> ogg_opus_stream::push(std::span<const std::uint8_t> packet,
                                                        std::int64_t first_sample, int real_samples) {
    if (!real_length_ && real_samples < frame_samples_) real_length_ = first_sample + real_samples;
    const opus_packet p{.data = {packet.begin(), packet.end()}, .first_sample = first_sample,
                        .real_samples = real_samples};
    const bool last = real_length_ && first_sample + frame_samples_ >= *real_length_ + lookahead_;
    if (!last) return writer_.append(std::span(&p, 1));
    finished_ = true;
    return writer_.finish(std::span(&p, 1));
}

}  // namespace megatts

#include "pipeline/audio/opus_packet_encoder.h"

#include <algorithm>
#include <string>
#include <utility>

#include "pipeline/audio/sample_rates.h"

namespace megatts {
namespace {

// One frame of at most 1275 bytes plus the TOC byte (RFC 6716 §3.2.1); every packet we ask for
// holds a single 10 or 20 ms frame.
constexpr int max_packet_bytes = 1276;

error opus_error(const char* call, int status) {
    return make_error(error_kind::internal, std::string("opus: ") + call + ": " +
                                                opus_strerror(status));
}

}  // namespace

void opus_packet_encoder::encoder_deleter::operator()(OpusEncoder* encoder) const {
    if (pool)
        pool->give_back(encoder);
    else
        opus_encoder_destroy(encoder);
}

result<opus_packet_encoder> opus_packet_encoder::create(const opus_packet_encoder_config& config,
                                                        std::shared_ptr<opus_encoder_pool> pool) {
    if (config.frame_ms != 10 && config.frame_ms != 20) {
        return make_error(error_kind::invalid_input,
                          "opus: frame duration must be 10 or 20 ms, got " +
                              std::to_string(config.frame_ms));
    }
    if (config.bitrate_bps < 6000 || config.bitrate_bps > 510000) {
        return make_error(error_kind::invalid_input,
                          "opus: bitrate must be 6000..510000 bit/s, got " +
                              std::to_string(config.bitrate_bps));
    }

    if (config.complexity < 0 || config.complexity > 10) {
        return make_error(error_kind::invalid_input,
                          "opus: complexity must be 0..10, got " + std::to_string(config.complexity));
    }

    int status = OPUS_OK;
    OpusEncoder* raw = pool ? pool->take() : nullptr;
    if (!raw) {
        raw = opus_encoder_create(vocoder_sample_rate, 1, OPUS_APPLICATION_AUDIO, &status);
        if (status != OPUS_OK) return opus_error("opus_encoder_create", status);
    }
    // Every setting this encoder differs in from a new one is set here, so a pooled encoder
    // (reset, with an earlier stream's settings) encodes as a new one does.
    std::unique_ptr<OpusEncoder, encoder_deleter> encoder(raw, encoder_deleter{std::move(pool)});
    status = opus_encoder_ctl(encoder.get(), OPUS_SET_BITRATE(config.bitrate_bps));
    if (status != OPUS_OK) return opus_error("OPUS_SET_BITRATE", status);
    status = opus_encoder_ctl(encoder.get(), OPUS_SET_COMPLEXITY(config.complexity));
    if (status != OPUS_OK) return opus_error("OPUS_SET_COMPLEXITY", status);
    status = opus_encoder_ctl(encoder.get(), OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
    if (status != OPUS_OK) return opus_error("OPUS_SET_SIGNAL", status);
    opus_int32 lookahead = 0;
    status = opus_encoder_ctl(encoder.get(), OPUS_GET_LOOKAHEAD(&lookahead));
    if (status != OPUS_OK) return opus_error("OPUS_GET_LOOKAHEAD", status);

    const int frame_samples = vocoder_sample_rate / 1000 * config.frame_ms;
    return opus_packet_encoder(std::move(encoder), frame_samples, lookahead);
}

opus_packet_encoder::opus_packet_encoder(std::unique_ptr<OpusEncoder, encoder_deleter> encoder,
                                         int frame_samples, int lookahead_samples)
    : encoder_(std::move(encoder)),
      frame_samples_(frame_samples),
      lookahead_samples_(lookahead_samples),
      scratch_(max_packet_bytes) {
    pending_.reserve(frame_samples_);
}

int opus_packet_encoder::pre_skip() const {
    return lookahead_samples_ * (opus_granule_rate / vocoder_sample_rate);
}

result<std::vector<opus_packet>> opus_packet_encoder::push(std::span<const float> samples) {
    std::vector<opus_packet> packets;
    while (!samples.empty()) {
        const std::size_t take =
            std::min(samples.size(), static_cast<std::size_t>(frame_samples_) - pending_.size());
        pending_.insert(pending_.end(), samples.begin(), samples.begin() + take);
        samples = samples.subspan(take);
        if (pending_.size() == static_cast<std::size_t>(frame_samples_)) {
            auto packet = encode_pending(frame_samples_);
            if (!packet) return packet.err();
            packets.push_back(std::move(*packet));
        }
    }
    return packets;
}

result<std::vector<opus_packet>> opus_packet_encoder::flush() {
    // The decoder's output lags the input by the lookahead, so the last real sample is only
    // decodable once the encoded frames reach lookahead_samples_ past it.
    const std::int64_t stream_end = frame_start_ + static_cast<std::int64_t>(pending_.size());
    std::vector<opus_packet> packets;
    while (frame_start_ < stream_end + lookahead_samples_) {
        const auto real_samples =
            static_cast<int>(std::max<std::int64_t>(0, stream_end - frame_start_));
        pending_.resize(frame_samples_, 0.0f);
        auto packet = encode_pending(real_samples);
        if (!packet) return packet.err();
        packets.push_back(std::move(*packet));
    }
    const int status = opus_encoder_ctl(encoder_.get(), OPUS_RESET_STATE);
    if (status != OPUS_OK) return opus_error("OPUS_RESET_STATE", status);
    frame_start_ = 0;
    return packets;
}

result<opus_packet> opus_packet_encoder::encode_pending(int real_samples) {
    const opus_int32 bytes = opus_encode_float(encoder_.get(), pending_.data(), frame_samples_,
                                               scratch_.data(), max_packet_bytes);
    if (bytes < 0) return opus_error("opus_encode_float", bytes);
    opus_packet packet{{scratch_.begin(), scratch_.begin() + bytes}, frame_start_, real_samples};
    frame_start_ += frame_samples_;
    pending_.clear();
    return packet;
}

}  // namespace megatts

#include "daemon/client/utterance_record.h"

namespace megatts::client {

std::vector<std::uint8_t> utterance_record::pcm16_bytes() const {
    std::vector<std::uint8_t> out;
    for (const auto& a : audio) out.insert(out.end(), a.payload.begin(), a.payload.end());
    return out;
}

std::vector<std::vector<std::uint8_t>> utterance_record::opus_packets() const {
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& a : audio)
        if (!a.payload.empty()) out.push_back(a.payload);
    return out;
}

std::int64_t utterance_record::audio_us(const received_audio& message) const {
    if (message.payload.empty() || !started) return 0;
    if (started->format == audio_format::opus) return std::int64_t{started->opus_frame_ms.value_or(20)} * 1000;
    const auto samples = static_cast<std::int64_t>(message.payload.size() / 2);
    return started->sample_rate > 0 ? samples * 1'000'000 / started->sample_rate : 0;
}

}  // namespace megatts::client

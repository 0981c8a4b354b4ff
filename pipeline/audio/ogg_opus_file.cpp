#include "pipeline/audio/ogg_opus_file.h"

#include <utility>

#include "pipeline/audio/ogg_opus_writer.h"
#include "pipeline/audio/write_file.h"

namespace megatts {

result<std::vector<std::uint8_t>> encode_ogg_opus(std::span<const float> samples,
                                                  const opus_packet_encoder_config& config) {
    auto encoder = opus_packet_encoder::create(config);
    if (!encoder) return encoder.err();
    auto writer = ogg_opus_writer::create(encoder->pre_skip(), {.page_duration_ms = 1000});
    if (!writer) return writer.err();

    auto packets = encoder->push(samples);
    if (!packets) return packets.err();
    auto bytes = writer->append(*packets);
    if (!bytes) return bytes.err();
    auto final_packets = encoder->flush();
    if (!final_packets) return final_packets.err();
    auto tail = writer->finish(*final_packets);
    if (!tail) return tail.err();

    std::vector<std::uint8_t> stream = std::move(*bytes);
    stream.insert(stream.end(), tail->begin(), tail->end());
    return stream;
}

result<void> write_ogg_opus_file(const std::filesystem::path& path, std::span<const float> samples,
                                 const opus_packet_encoder_config& config) {
    auto stream = encode_ogg_opus(samples, config);
    if (!stream) return stream.err();
    return write_file(path, *stream);
}

}  // namespace megatts

#include "pipeline/audio/wav_writer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "pipeline/audio/little_endian.h"
#include "pipeline/audio/write_file.h"

namespace megatts {
namespace {

constexpr std::uint16_t format_tag_pcm = 1;
constexpr std::uint16_t format_tag_ieee_float = 3;

std::uint32_t bytes_per_sample(wav_sample_format format) {
    return format == wav_sample_format::pcm16 ? 2 : 4;
}

std::int16_t to_pcm16(float sample) {
    // std::clamp passes NaN through; silence is the only harmless value for it.
    if (std::isnan(sample)) return 0;
    // 32767 rather than 32768 keeps the mapping symmetric: +-1.0 land on +-32767 without a
    // clip on the positive side, and every int16 except -32768 survives a round trip through
    // float unchanged.
    return static_cast<std::int16_t>(std::lround(std::clamp(sample, -1.0f, 1.0f) * 32767.0f));
}

}  // namespace

result<std::vector<std::uint8_t>> wav_header(int sample_rate, wav_sample_format format,
                                             std::optional<std::size_t> sample_count) {
    const std::uint32_t sample_bytes = bytes_per_sample(format);
    const std::uint64_t byte_rate = static_cast<std::uint64_t>(sample_rate) * sample_bytes;
    if (sample_rate <= 0 || byte_rate > std::numeric_limits<std::uint32_t>::max()) {
        return make_error(error_kind::invalid_input,
                          "wav: unusable sample rate " + std::to_string(sample_rate));
    }
    const bool is_float = format == wav_sample_format::float32;
    const std::uint32_t fmt_size = is_float ? 18 : 16;
    const std::uint32_t fact_chunk_size = is_float ? 12 : 0;
    // What the RIFF size counts besides the samples: "WAVE", the fmt and fact chunks and the
    // data chunk's own header.
    const std::uint32_t riff_overhead = 4 + (8 + fmt_size) + fact_chunk_size + 8;

    std::uint32_t riff_size = wav_unknown_size;
    std::uint32_t data_size = wav_unknown_size;
    std::uint32_t fact_sample_count = wav_unknown_size;
    if (sample_count) {
        // Strictly below wav_unknown_size, so that a sized file never reads as a stream.
        const std::uint64_t max_samples = (wav_unknown_size - 1 - riff_overhead) / sample_bytes;
        if (*sample_count > max_samples) {
            return make_error(error_kind::invalid_input,
                              "wav: " + std::to_string(*sample_count) +
                                  " samples exceed the 32-bit WAV size limit");
        }
        data_size = static_cast<std::uint32_t>(*sample_count) * sample_bytes;
        riff_size = riff_overhead + data_size;
        fact_sample_count = static_cast<std::uint32_t>(*sample_count);
    }

    std::vector<std::uint8_t> out;
    out.reserve(8 + riff_overhead);
    append_ascii(out, "RIFF");
    append_le(out, riff_size);
    append_ascii(out, "WAVE");

    append_ascii(out, "fmt ");
    append_le(out, fmt_size);
    append_le(out, is_float ? format_tag_ieee_float : format_tag_pcm);
    append_le<std::uint16_t>(out, 1);  // channels
    append_le(out, static_cast<std::uint32_t>(sample_rate));
    append_le(out, static_cast<std::uint32_t>(byte_rate));
    append_le(out, static_cast<std::uint16_t>(sample_bytes));  // block align: one mono frame
    append_le(out, static_cast<std::uint16_t>(8 * sample_bytes));  // bits per sample
    if (is_float) {
        append_le<std::uint16_t>(out, 0);  // cbSize: no format-specific extension
        append_ascii(out, "fact");
        append_le<std::uint32_t>(out, 4);
        append_le(out, fact_sample_count);
    }

    append_ascii(out, "data");
    append_le(out, data_size);
    return out;
}

void append_wav_samples(std::span<const float> samples, wav_sample_format format,
                        std::vector<std::uint8_t>& out) {
    if (format == wav_sample_format::pcm16) {
        for (float sample : samples) append_le(out, std::bit_cast<std::uint16_t>(to_pcm16(sample)));
    } else {
        for (float sample : samples) append_le(out, std::bit_cast<std::uint32_t>(sample));
    }
}

result<std::vector<std::uint8_t>> encode_wav(std::span<const float> samples, int sample_rate,
                                             wav_sample_format format) {
    auto header = wav_header(sample_rate, format, samples.size());
    if (!header) return header.err();
    std::vector<std::uint8_t> bytes = std::move(*header);
    bytes.reserve(bytes.size() + samples.size() * bytes_per_sample(format));
    append_wav_samples(samples, format, bytes);
    return bytes;
}

result<void> write_wav_file(const std::filesystem::path& path, std::span<const float> samples,
                            int sample_rate, wav_sample_format format) {
    auto bytes = encode_wav(samples, sample_rate, format);
    if (!bytes) return bytes.err();
    return write_file(path, *bytes);
}

}  // namespace megatts

// WAV (RIFF/WAVE) encoding of mono float audio: whole files, in memory or on disk, and the
// pieces of a WAV stream whose length is not known when its header is sent.
//
// In: float samples, nominally in [-1, 1], at any positive sample rate (the vocoder's 24 kHz or
// the rate a client asked for). Out: little-endian bytes of a mono WAV in one of two formats:
//   pcm16   WAVE_FORMAT_PCM (1), 16-bit. Samples are clipped to [-1, 1], scaled by 32767 and
//           rounded to nearest, halves away from zero; NaN becomes 0.
//   float32 WAVE_FORMAT_IEEE_FLOAT (3), 32-bit, samples stored unchanged. As for every non-PCM
//           format tag, the fmt chunk is the 18-byte WAVEFORMATEX (cbSize 0) and a fact chunk
//           with the sample count precedes the data chunk.
// Streaming (HTTP chunked responses): send wav_header(rate, format, std::nullopt), then the bytes
// of append_wav_samples for each block. The RIFF, data and fact sizes of such a header are
// wav_unknown_size (0xFFFFFFFF): the unofficial convention, used by opus-tools among others, for
// "the data chunk runs to the end of the stream"; a stream can never be sized in advance.
//
// Thread: pure functions, callable from any thread. Blocking: write_wav_file does file I/O; the
// rest is CPU only. Errors: invalid_input for a sample rate that is not positive or too large for
// the 32-bit byte-rate field, or for more sample data than 32-bit chunk sizes can describe
// (4 GiB); io from write_wav_file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

enum class wav_sample_format {
    pcm16,
    float32,
};

inline constexpr std::uint32_t wav_unknown_size = 0xFFFFFFFF;

// The bytes before the samples: RIFF header, fmt chunk, fact chunk (float32 only) and the data
// chunk header; sized for `sample_count` samples, or for a stream of unknown length.
result<std::vector<std::uint8_t>> wav_header(int sample_rate, wav_sample_format format,
                                             std::optional<std::size_t> sample_count);

// Appends the data-chunk bytes of `samples` to `out`. For pcm16 these bytes are also the
// headerless 16-bit little-endian `pcm` response format.
void append_wav_samples(std::span<const float> samples, wav_sample_format format,
                        std::vector<std::uint8_t>& out);

// A complete WAV file in memory.
result<std::vector<std::uint8_t>> encode_wav(std::span<const float> samples, int sample_rate,
                                             wav_sample_format format);

result<void> write_wav_file(const std::filesystem::path& path, std::span<const float> samples,
                            int sample_rate, wav_sample_format format);

}  // namespace megatts

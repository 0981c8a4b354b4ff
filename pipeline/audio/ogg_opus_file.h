// Whole-utterance Ogg Opus encoding: opus_packet_encoder and ogg_opus_writer in one call, for
// non-streamed `response_format=opus` responses and for files written by the CLI.
//
// In: the complete 24 kHz mono float PCM of one utterance and the encoder settings. Out: a
// complete Ogg Opus stream (see ogg_opus_writer.h) that decodes to exactly 2 * samples.size()
// samples at 48 kHz; nothing is streamed, so pages are as long as the writer allows.
// Thread: any; no shared state. Blocking: write_ogg_opus_file does file I/O; encode_ogg_opus is
// CPU only. Errors: those of opus_packet_encoder, ogg_opus_writer and write_file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/opus_packet_encoder.h"

namespace megatts {

result<std::vector<std::uint8_t>> encode_ogg_opus(std::span<const float> samples,
                                                  const opus_packet_encoder_config& config = {});

result<void> write_ogg_opus_file(const std::filesystem::path& path, std::span<const float> samples,
                                 const opus_packet_encoder_config& config = {});

}  // namespace megatts

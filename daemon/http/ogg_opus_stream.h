// ogg_opus_stream: the Ogg Opus body of a speech response (response_format opus), written
// packet by packet from a session's Opus chunks as they arrive.
//
// Why not just ogg_opus_writer: its finish() must be given the stream's last packet, to put
// the end-of-stream page and the end trim on it, but the session marks no chunk as last (it
// reports done only once every chunk was sent). The last packet is known anyway from the
// encoder's contract (opus_packet_encoder.h): the packets that end a stream are the only ones
// with fewer real samples than a frame, the first of them tells the real length N, and the
// stream ends with the packet that reaches N + lookahead, where the decoder has produced every
// real sample. push() therefore writes each packet at once and ends the stream on that one.
//
// In: each chunk's packet, its first sample and real samples (at 24 kHz), in order. Out: the
// Ogg bytes completed by it (header pages with the first packet). Thread: one owner; not
// thread-safe. Never blocks. Errors: those of ogg_opus_writer (a packet after the end, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/ogg_opus_writer.h"

namespace megatts {

class ogg_opus_stream {
public:
    // pre_skip: 48 kHz samples of encoder lookahead (utterance_started::opus_pre_skip);
    // frame_samples: samples per packet at 24 kHz; page_duration_ms as ogg_opus_writer_config.
    static result<ogg_opus_stream> create(int pre_skip, int frame_samples, int page_duration_ms);

    result<std::vector<std::uint8_t>> push(std::span<const std::uint8_t> packet, std::int64_t first_sample,
                                           int real_samples);

    bool finished() const { return finished_; }

private:
    ogg_opus_stream(ogg_opus_writer writer, int lookahead, int frame_samples);

    ogg_opus_writer writer_;
    int lookahead_;      // at 24 kHz
    int frame_samples_;  // at 24 kHz
    std::optional<std::int64_t> real_length_;  // known from the first padded packet
    bool finished_ = false;
};

}  // namespace megatts

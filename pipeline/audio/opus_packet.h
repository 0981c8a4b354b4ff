// One Opus packet of a mono 24 kHz stream, as opus_packet_encoder produces it.
//
// Contract: a plain value, safe to move between threads. `data` is one Opus packet (RFC 6716
// §3) holding one frame. `first_sample` is the index, at 24 kHz from the start of the stream,
// of the first input sample of that frame; `real_samples` is how many of the frame's samples
// were real input rather than the silence that opus_packet_encoder::flush() pads with: the whole
// frame, except in the packets of flush(), where it is fewer and may be 0. A decoder's output is
// late by the encoder's lookahead: decoded sample i + lookahead_samples() is input sample i (to
// within a sample: libopus 1.3.1 in hybrid mode decodes one 24 kHz sample early).
#pragma once

#include <cstdint>
#include <vector>

namespace megatts {

struct opus_packet {
    std::vector<std::uint8_t> data;
    std::int64_t first_sample = 0;
    int real_samples = 0;
};

}  // namespace megatts

// Ogg Opus (RFC 7845) encapsulation of one opus_packet_encoder stream, built incrementally so
// that an HTTP response can start while the utterance is still being generated.
//
// In: the encoder's pre-skip at creation; its packets, in order, through append(); the packets
// of its flush() through finish(), which ends the stream. Out: from each call, the bytes of the
// Ogg pages completed by it (possibly none); the concatenation of all outputs is the stream.
// The first output also carries the two header pages: OpusHead alone on the first (BOS) page
// (version 1, one channel, the pre-skip, input rate 24000, gain 0, mapping family 0), then
// OpusTags (vendor "megatts" and the libopus version, no comments) on the second.
//
// Granule positions count 48 kHz samples from the start of decoding, pre-skip included: each
// page carries the total duration of the packets completed so far, and the last page (EOS set)
// carries pre-skip + 2 * (real 24 kHz samples), so that a decoder trims the padding of the final
// packets and outputs exactly twice as many 48 kHz samples as were pushed (RFC 7845 §4.4).
//
// Page policy: a page is closed as soon as its packets span page_duration_ms. The default, 80 ms,
// is one vocoder frame: its four 20 ms packets arrive together, so grouping them delays nothing
// and the page overhead (27 bytes + 4 lacing bytes) stays near 3 kbit/s. 0 closes a page after
// every packet: no buffering at all, at about 11 kbit/s of overhead for 20 ms packets. finish()
// always closes the last page.
//
// Thread: one owner at a time; not thread-safe. Blocking: no, CPU only. Errors: invalid_input
// for a pre-skip or page duration out of range, a packet whose duration cannot be parsed, a
// finish() without packets or whose packets end before the last real sample decodes, or any call
// after finish(); internal when libogg fails. After an error the writer must be discarded: the
// stream may hold part of the packets of the failed call.
#pragma once

#include <ogg/ogg.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/opus_packet.h"

namespace megatts {

struct ogg_opus_writer_config {
    // Distinct serials are only needed when streams are chained or multiplexed.
    std::uint32_t serial = 1;
    int page_duration_ms = 80;  // 0..1000
};

class ogg_opus_writer {
public:
    // pre_skip: opus_packet_encoder::pre_skip() of the encoder that makes the packets.
    static result<ogg_opus_writer> create(int pre_skip, const ogg_opus_writer_config& config = {});

    result<std::vector<std::uint8_t>> append(std::span<const opus_packet> packets);
    result<std::vector<std::uint8_t>> finish(std::span<const opus_packet> final_packets);

private:
    struct stream_deleter {
        void operator()(ogg_stream_state* stream) const;
    };

    ogg_opus_writer(std::unique_ptr<ogg_stream_state, stream_deleter> stream, int pre_skip,
                    int page_duration_samples);

    result<void> write_headers();
    result<void> submit(const opus_packet& packet, bool end_of_stream);
    result<void> flush_pages();

    std::unique_ptr<ogg_stream_state, stream_deleter> stream_;
    int pre_skip_;
    std::int64_t page_duration_samples_;  // at 48 kHz
    std::int64_t packet_count_ = 0;       // Ogg packet number, headers included
    std::int64_t granule_ = 0;            // 48 kHz samples in the packets submitted so far
    std::int64_t real_samples_ = 0;       // 24 kHz input samples in them, padding excluded
    std::int64_t open_page_samples_ = 0;  // 48 kHz samples on the page not yet closed
    bool finished_ = false;
    std::vector<std::uint8_t> out_;       // completed pages not yet returned
};

}  // namespace megatts

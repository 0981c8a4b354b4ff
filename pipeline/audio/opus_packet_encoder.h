// Opus encoding of the vocoder's 24 kHz mono PCM into raw packets, for the live WebSocket path
// and, through ogg_opus_writer, for Ogg Opus responses.
//
// In: float samples at 24 kHz (vocoder_sample_rate), nominally in [-1, 1], in blocks of any
// size. Out: zero or more complete packets per push(), in stream order (see opus_packet.h).
// flush() ends the stream: it pads with silence until the decoder has produced every real
// sample (the lookahead included), returns those packets, and resets the encoder so that the
// next push() starts a new stream at sample 0.
//
// Choices, measured with libopus 1.3.1:
// - 24 kHz in, no resampling: Opus encodes 8/12/16/24/48 kHz natively, and 24 kHz gives it the
//   whole super-wideband (12 kHz) band the vocoder produces; the browser decodes at 48 kHz.
// - OPUS_APPLICATION_AUDIO. OPUS_GET_LOOKAHEAD is 156 samples at 24 kHz (6.5 ms) for AUDIO and
//   VOIP alike, 60 (2.5 ms) for RESTRICTED_LOWDELAY. Low-delay would save 4 ms of
//   time-to-first-audio, but it is CELT-only, which codes speech worse at these bitrates than
//   the SILK/hybrid modes; 4 ms is small next to the 80 ms vocoder frame that precedes the first
//   packet. AUDIO rather than VOIP because VOIP's intelligibility processing (an adaptive
//   high-pass, a bias towards SILK) alters speech that is clean already: on the tests' tone and
//   chirp, decoded-to-input correlation is 0.998 with AUDIO and 0.980 with VOIP.
// - OPUS_SIGNAL_VOICE: TTS output is always speech, so the encoder's speech/music detector can
//   only be wrong; left to it, tonal passages flip into CELT (correlation 0.951 on the same
//   signal, against 0.998 in hybrid mode).
// - 20 ms frames by default: the vocoder delivers 80 ms at once, so 20 ms frames cost no latency,
//   while 10 ms frames double the per-packet overhead and code less efficiently. 10 ms only
//   helps if PCM ever arrives in smaller pieces.
// - 32 kbit/s by default, VBR: the top of the 24–32 kbit/s range of reference/ecosystem.md §3.3;
//   libopus then codes 24 kHz speech in hybrid mode over the full super-wideband band, at a
//   twelfth of the 384 kbit/s of PCM16.
// pre_skip() is the OpusHead pre-skip (RFC 7845 §4.2): the lookahead in 48 kHz samples, which a
// decoder discards; raw-packet clients need it too, since WebCodecs without an OpusHead does
// not drop those samples itself.
//
// - Complexity 5, not libopus's 10: the first packet's encoding is a stage of time-to-first-
//   audio, and every stream's packets cost a core's time. Measured with libopus 1.3.1 on this
//   project's Debian 12 machine (20 ms packets, 32 kbit/s, a tone and chirp): 10 takes 350 us a
//   packet (600 us for a stream's first), 17.5 ms of one core per second of audio; 5 takes 190
//   us, 9.7 ms; the decoded signal's correlation with the input is the same (0.851 and 0.854 on
//   that signal; the tests' tone and chirp stay above 0.95). On the H100 machine it took 0.2 ms
//   off bench latency's first_packet and first_sent stages each. (The e2e/faults underruns once
//   blamed on it came from the test's own timing, at either complexity: fixed there.)
// Thread: one owner at a time (a session's strand); not thread-safe. Blocking: no, CPU only,
// about 10 ms of one core per second of audio at complexity 5. Errors: invalid_input from
// create() for an unsupported frame duration or bitrate; internal when libopus fails, after
// which the encoder must be discarded.
#pragma once

#include <opus/opus.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/audio/opus_encoder_pool.h"
#include "pipeline/audio/opus_packet.h"

namespace megatts {

struct opus_packet_encoder_config {
    int frame_ms = 20;        // 10 or 20
    int bitrate_bps = 32000;  // libopus's range: 6000..510000
    int complexity = 5;       // libopus's 0..10 (its default is 10)
};

class opus_packet_encoder {
public:
    // With a pool, the libopus encoder comes from it when one is idle and goes back to it
    // when this object is destroyed (opus_encoder_pool.h); the packets are the same.
    static result<opus_packet_encoder> create(const opus_packet_encoder_config& config,
                                              std::shared_ptr<opus_encoder_pool> pool = nullptr);

    result<std::vector<opus_packet>> push(std::span<const float> samples);
    result<std::vector<opus_packet>> flush();

    int frame_samples() const { return frame_samples_; }
    int lookahead_samples() const { return lookahead_samples_; }
    int pre_skip() const;

private:
    struct encoder_deleter {
        std::shared_ptr<opus_encoder_pool> pool;  // null: destroyed, not kept
        void operator()(OpusEncoder* encoder) const;
    };

    opus_packet_encoder(std::unique_ptr<OpusEncoder, encoder_deleter> encoder, int frame_samples,
                        int lookahead_samples);

    // Encodes pending_, which holds exactly one frame, and starts the next frame.
    result<opus_packet> encode_pending(int real_samples);

    std::unique_ptr<OpusEncoder, encoder_deleter> encoder_;
    int frame_samples_;
    int lookahead_samples_;
    std::vector<float> pending_;         // the frame being filled; never whole between calls
    std::int64_t frame_start_ = 0;       // stream index of pending_[0]
    std::vector<std::uint8_t> scratch_;  // libopus writes here; packets get exact-size copies
};

}  // namespace megatts

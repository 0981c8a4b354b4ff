// session_events: what a session tells its transport, and the transport sink's half of the
// contract (DESIGN.md §1: the last stage of the graph is the socket). The daemon implements
// it once per connection (WebSocket or HTTP response); tests implement it to record.
//
// Thread: every method is called on the session's strand (tts_service::open_session), one at
// a time, never after tts_session::close() returned on that strand. Blocking: never; an
// implementation copies what it needs (the audio bytes are valid only during the call) and
// returns. It may call back into the session (every tts_session method is safe there).
//
// Per utterance the order is: on_started, then on_audio for each chunk in stream order, then
// on_metrics once the first chunk's write completed, then on_done once every chunk was
// accounted for through tts_session::audio_sent() (so done means "all audio is written", and
// marks the end of the stream: no chunk is flagged last).
// on_error ends the utterance instead of on_done. A cancelled utterance ends silently: after
// cancel() no event of the utterances it cancelled is started. Utterances interleave only at
// their edges: the next utterance's on_started may come at any time, and its first on_audio
// right after the previous utterance's last on_audio, before that one's on_done (which waits
// for receipts).
//
// Backpressure: each chunk carries a receipt; the transport hands it back through
// tts_session::audio_sent() when the write completes (written = true) or when it discards the
// chunk (written = false, e.g. purging its queue on cancel). Audio handed over and not yet
// returned counts against session_limits::soft_queue_ms; past it the engine stops producing
// for this session and on_stall({stalled = true}) tells the client, and once half of it
// drained, on_stall({stalled = false}). The hard limit (closing a client that stays stalled)
// is the transport's policy.
#pragma once

#include <cstdint>
#include <span>

#include "pipeline/model/prompt_layout.h"
#include "pipeline/session/session_error.h"
#include "pipeline/session/utterance_options.h"
#include "pipeline/synthesis/utterance.h"
#include "pipeline/telemetry/ttfa_marks.h"

namespace megatts {

// Identifies one audio chunk for tts_session::audio_sent().
struct audio_receipt {
    std::uint32_t epoch = 0;
    std::uint32_t context = 0;
    std::uint32_t sequence = 0;
    std::int64_t duration_us = 0;
};

struct utterance_started {
    std::uint32_t context = 0;  // the utterance's id in this session: 1, 2, ... in start order
    audio_format format = audio_format::opus;
    int sample_rate = 0;        // of the chunks' samples (opus: 24000, the coded rate)
    int opus_frame_ms = 0;      // opus only
    int opus_pre_skip = 0;      // opus only: decoder samples to drop, at 48 kHz (RFC 7845)
};

struct audio_chunk {
    audio_receipt receipt;
    audio_format format = audio_format::opus;
    int sample_rate = 0;
    std::int64_t first_sample = 0;  // index of its first sample in the utterance, at sample_rate
    // Real samples it carries at sample_rate. Opus: the packet's frame, except in the packets
    // that end the stream, which are padded with silence and carry fewer (possibly 0).
    int samples = 0;
    std::span<const std::uint8_t> bytes;  // one Opus packet, or PCM16 little-endian
};

struct utterance_metrics {
    std::uint32_t context = 0;
    ttfa_marks marks;  // all nine present, non-decreasing
};

struct utterance_done {
    std::uint32_t context = 0;
    stop_reason stop = stop_reason::eos;
    text_layout layout = text_layout::non_streaming;
    int text_tokens = 0;
    int frames = 0;
    double audio_ms = 0.0;
    double compute_ms = 0.0;        // engine time spent on this utterance
    double real_time_factor = 0.0;  // compute_ms / audio_ms
};

struct stall_notice {
    bool stalled = false;
    double queued_ms = 0.0;  // audio handed to the transport and not yet written
};

class session_events {
public:
    virtual ~session_events() = default;
    virtual void on_started(const utterance_started& started) = 0;
    virtual void on_audio(const audio_chunk& chunk) = 0;
    virtual void on_metrics(const utterance_metrics& metrics) = 0;
    virtual void on_done(const utterance_done& done) = 0;
    virtual void on_stall(const stall_notice& notice) = 0;
    // The utterance `context` failed (invalid_utf8, empty_text, internal, engine_full,
    // engine_failed) and ends here; context 0: the session as a whole (engine_failed: the engine
    // failed and the server is going down).
    virtual void on_error(std::uint32_t context, const session_error& error) = 0;
};

}  // namespace megatts

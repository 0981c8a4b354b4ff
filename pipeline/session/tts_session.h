// tts_session: one client's text-to-speech session (one WebSocket connection, or one HTTP
// request): utterances in, audio and events out through session_events.
//
// Calls in (any thread; the daemon makes them on the session's strand, which also keeps a
// `text` + `end` pair of one handler in one batch, see "layout" below):
//   start(options)      opens an utterance: voice, language, sampling, output format. Checked
//                       now: unknown_voice, unknown_language, invalid_argument, utterance_open
//                       (the previous one still takes text), too_many_utterances.
//   text(chunk, after)  appends UTF-8 text to the open utterance; after = flush or end closes
//                       it in the same call. With no open utterance: after a flush, the text
//                       opens a new utterance with the same options; otherwise no_utterance.
//                       text_too_long past session_limits::max_text_bytes.
//   flush()             closes the open utterance's text: it is spoken to the end; later text
//                       opens the next utterance with the same options (ElevenLabs' flush).
//   end()               closes the open utterance's text; the next utterance needs start().
//                       flush()/end() of an utterance without text: empty_text.
//   cancel()            stops everything now: bumps the epoch, so queued input, engine output
//                       in flight and audio not yet handed over are dropped wherever they are;
//                       the engine drops the utterance at its next round. Never fails.
//   audio_sent(r, w)    the transport's completion report for one chunk (session_events.h).
//   client_report(r)    what the client's player reported (underruns, first played).
//   close()             cancel() and detach: no event after it; frees the service slot.
// A call that fails changes nothing. Calls are queued (session_limits::input_queue_frames,
// overflow: queue_full) and served in order on the strand; cancel() bypasses the queue.
//
// Several utterances: each start() (or text after a flush) opens the next one; they are
// synthesised one at a time in order, the next one admitted as soon as the engine finished
// the previous; up to max_queued_utterances wait.
//
// Layout: an utterance whose text is closed by the time the strand serves the call that
// brought it (text with after = flush or end; or text() then end() from one handler that runs
// on the session's strand) uses the non-streaming prompt layout, the official default, and its
// audio equals `megatts say`. Otherwise it starts as soon as its
// first text token is final, in the streaming-text layout (one text token per frame, equal to
// `megatts say --stream-text`); when the text runs dry before flush/end the utterance waits for
// more text instead of reaching EOS early.
//
// Lifetime: returned by tts_service::open_session() as a shared_ptr; the destructor calls
// close(). The service, and the executor running the session's strand, must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "pipeline/session/session_events.h"
#include "pipeline/session/session_result.h"
#include "pipeline/session/utterance_options.h"

namespace megatts {

class session_core;

enum class text_end { more, flush, end };

struct client_playback_report {
    int underruns = 0;                // new underruns since the previous report
    double first_played_ms = -1.0;    // client's own TTFA of the current utterance; < 0: none
};

class tts_session {
public:
    explicit tts_session(std::shared_ptr<session_core> core);
    ~tts_session();
    tts_session(const tts_session&) = delete;
    tts_session& operator=(const tts_session&) = delete;

    session_status start(const utterance_options& options);
    session_status text(std::string_view chunk, text_end after = text_end::more);
    session_status flush();
    session_status end();
    void cancel();
    void audio_sent(const audio_receipt& receipt, bool written);
    void client_report(const client_playback_report& report);
    void close();

    std::uint64_t id() const;

private:
    std::shared_ptr<session_core> core_;
};

}  // namespace megatts

// session_error: the named errors of the session API, each with a stable snake_case name that
// the daemon puts on the wire (the `code` of an `error` event) and into the errors metric.
//
// Contract: plain values, any thread. The comment on each code says what the daemon should
// answer; the session itself never closes a connection.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace megatts {

enum class session_errc {
    too_many_sessions,    // open_session(): the service is full (WebSocket close 1013, HTTP 503)
    queue_full,           // the session's input queue is full: the client sends faster than it is served
    too_many_utterances,  // start()/text(): more utterances queued than session_limits allows
    utterance_open,       // start() while the previous utterance still takes text: end or flush it first
    no_utterance,         // text()/flush()/end() with no start() before it
    empty_text,           // end()/flush() of an utterance that got no text
    text_too_long,        // the utterance's text exceeds session_limits::max_text_bytes
    invalid_utf8,         // the text is not UTF-8: the utterance is abandoned
    unknown_voice,        // start(): the model has no such speaker
    unknown_language,     // start(): the model has no such language
    invalid_argument,     // start(): sampling, format, sample rate or Opus frame size out of range
    session_closed,       // a call after close()
    internal,             // a model or codec failure: the utterance is abandoned (a bug)
    engine_full,          // every engine slot is taken: the utterance is refused (WebSocket close 1013,
                          // HTTP 503 with Retry-After)
    engine_failed,        // the engine's backend failed (a CUDA error): the server is going down
};

inline constexpr std::size_t k_session_errc_count = 15;

inline constexpr std::array<session_errc, k_session_errc_count> k_session_errcs = {
    session_errc::too_many_sessions, session_errc::queue_full,     session_errc::too_many_utterances,
    session_errc::utterance_open,    session_errc::no_utterance,   session_errc::empty_text,
    session_errc::text_too_long,     session_errc::invalid_utf8,   session_errc::unknown_voice,
    session_errc::unknown_language,  session_errc::invalid_argument, session_errc::session_closed,
    session_errc::internal,          session_errc::engine_full,    session_errc::engine_failed,
};

std::string_view session_errc_name(session_errc code);

struct session_error {
    session_errc code = session_errc::internal;
    std::string message;
};

}  // namespace megatts

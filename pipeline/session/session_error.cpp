#include "pipeline/session/session_error.h"

namespace megatts {

std::string_view session_errc_name(session_errc code) {
    switch (code) {
    case session_errc::too_many_sessions: return "too_many_sessions";
    case session_errc::queue_full: return "queue_full";
    case session_errc::too_many_utterances: return "too_many_utterances";
    case session_errc::utterance_open: return "utterance_open";
    case session_errc::no_utterance: return "no_utterance";
    case session_errc::empty_text: return "empty_text";
    case session_errc::text_too_long: return "text_too_long";
    case session_errc::invalid_utf8: return "invalid_utf8";
    case session_errc::unknown_voice: return "unknown_voice";
    case session_errc::unknown_language: return "unknown_language";
    case session_errc::invalid_argument: return "invalid_argument";
    case session_errc::session_closed: return "session_closed";
    case session_errc::internal: return "internal";
    case session_errc::engine_full: return "engine_full";
    case session_errc::engine_failed: return "engine_failed";
    }
    return "internal";
}

}  // namespace megatts

#include "daemon/protocol/session_error_code.h"

namespace megatts {

error_code protocol_error_code(session_errc code) {
    switch (code) {
    case session_errc::too_many_sessions: return error_code::server_busy;
    case session_errc::queue_full: return error_code::queue_full;
    case session_errc::too_many_utterances: return error_code::too_many_utterances;
    case session_errc::utterance_open: return error_code::utterance_open;
    case session_errc::no_utterance: return error_code::no_utterance;
    case session_errc::empty_text: return error_code::empty_text;
    case session_errc::text_too_long: return error_code::text_too_long;
    case session_errc::invalid_utf8: return error_code::invalid_utf8;
    case session_errc::unknown_voice: return error_code::unknown_voice;
    case session_errc::unknown_language: return error_code::unknown_language;
    case session_errc::invalid_argument: return error_code::bad_message;
    case session_errc::internal: return error_code::synthesis_failed;
    case session_errc::engine_full: return error_code::server_busy;
    case session_errc::engine_failed: return error_code::internal;
    case session_errc::session_closed: return error_code::internal;
    }
    return error_code::internal;
}

}  // namespace megatts

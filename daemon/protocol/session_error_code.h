// session_error_code: the protocol error code (PROTOCOL.md §4.6) for each error of the
// pipeline's session API (pipeline/session/session_error.h).
//
// Contract: total over session_errc. Codes whose cause the server itself checks first
// (too_many_sessions, invalid_argument) still map, so that nothing reaches a client unnamed.
// Pure; any thread.
#pragma once

#include "daemon/protocol/error_code.h"
#include "pipeline/session/session_error.h"

namespace megatts {

error_code protocol_error_code(session_errc code);

}  // namespace megatts

// warm_up: one short utterance through the whole pipeline before the server reports ready, so
// that the first client does not pay for page faults in the weights, lazy initialisation and
// cold caches (/readyz turns ready only after it, DESIGN.md §6).
//
// Contract: blocks the calling thread (not an io_context thread: the session's events run
// there) until the utterance is done, at most `limit` frames long, or `timeout` passes. Errors:
// the session's error (a model that cannot speak is not ready), unavailable on timeout.
#pragma once

#include <chrono>
#include <string>

#include "daemon/server/asio_strand.h"
#include "kernels/common/result.h"
#include "pipeline/session/tts_service.h"

namespace megatts {

struct warm_up_report {
    int frames = 0;
    int chunks = 0;
    double milliseconds = 0;
};

result<warm_up_report> warm_up(tts_service& service, io_strand strand, const std::string& voice,
                               const std::string& text, int max_frames, std::chrono::seconds timeout);

}  // namespace megatts

// utterance_reader: reads whole utterances from a blocking tts_client, checked by an
// utterance_assembler (its contract lists the promises checked).
//
// Contract: next() reads until the next utterance's `done` and returns its record; it fails
// on a broken promise, the server's close, a receive error, or when `deadline` passes. The
// reader keeps a later utterance's early `started` for the following next(). Thread: the
// client's. Blocking: up to the deadline.
#pragma once

#include <chrono>

#include "daemon/client/tts_client.h"
#include "daemon/client/utterance_assembler.h"
#include "daemon/client/utterance_record.h"

namespace megatts::client {

class utterance_reader {
public:
    explicit utterance_reader(tts_client& client) : client_(client) {}
    result<utterance_record> next(std::chrono::milliseconds deadline);

private:
    tts_client& client_;
    utterance_assembler assembler_;
};

// One utterance when no other is queued behind it.
result<utterance_record> receive_utterance(tts_client& client, std::chrono::milliseconds deadline);

}  // namespace megatts::client

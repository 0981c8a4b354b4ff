// utterance_assembler: builds utterance_records from a connection's messages, one message at a
// time, and checks the protocol's promises on the way (daemon/PROTOCOL.md §3, §5), so that a
// blocking reader (utterance_reader) and an asynchronous client (the load generator) check the
// wire the same way.
//
// Contract: add() takes the connection's next message; it returns the finished record when the
// message was the utterance's `done`, nothing while the utterance goes on, and an error when
// the stream breaks a promise: audio of another context, sequence numbers not consecutive from
// 0, `first` not exactly on sequence 0, `last` carrying a payload, an empty message without
// `last`, timestamps that skip or overlap, audio before `started`, a `done` of another context,
// `metrics` missing or audio not ending with `last` while the utterance finished with audio, a
// `done` whose message count differs from what arrived; and the server's close (named with
// its code and reason). A later utterance's `started` may arrive before this one's `done`
// (utterances queue); it is kept for the next record. Events not about the utterance (ready,
// stall, errors without context) go to the record's other_events.
// Thread: one owner; not thread-safe. Never blocks.
#pragma once

#include <optional>

#include "daemon/client/received.h"
#include "daemon/client/utterance_record.h"
#include "kernels/common/result.h"

namespace megatts::client {

class utterance_assembler {
public:
    result<std::optional<utterance_record>> add(received message);

private:
    result<std::optional<utterance_record>> finish();

    utterance_record current_;
    std::optional<started_event> early_started_;  // the next utterance's, seen before this one's done
};

}  // namespace megatts::client

// send_queue: the bounded queue of one WebSocket connection's outgoing messages, measured in
// microseconds of audio (PROTOCOL.md §6) and, for events, in messages.
//
// Order. Messages leave in the order pushed, with one exception that keeps the protocol's
// promise "audio of the next context starts only after the previous context's done": the
// session reports an utterance done only after all its audio was written, by which time the
// next utterance's audio may already wait here. So push_context_end() inserts the closing
// `last` message and the `done` event before the first waiting message of a later context, and
// next() holds back audio of a later context while the context being streamed has not ended.
//
// Bounds. The queue never refuses a push (dropping audio would corrupt the stream); push
// reports whether the queue is now past its limits, and the owner then closes the connection
// (1008): audio past `hard_limit_us`, or more than `max_events` events. Memory is thereby
// bounded by the limits plus what arrives before the close.
//
// Cancel. drop_audio() removes every audio message not yet taken and returns their receipts,
// so the owner can report them unsent; audio_end and events stay.
//
// Thread: one owner (the connection's strand); not thread-safe. Never blocks; no errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "daemon/server/outgoing_message.h"

namespace megatts {

class send_queue {
public:
    send_queue(std::int64_t hard_limit_us, std::size_t max_events);

    // Appends; false when the queue is now past a limit.
    [[nodiscard]] bool push(outgoing_message message);
    // Inserts the end of `context`'s audio (its audio_end message) and its done event, in that
    // order, before the first waiting message of a later context; false past a limit.
    [[nodiscard]] bool push_context_end(outgoing_message audio_end, outgoing_message done);

    // The message to write next, or nullptr when the queue is empty or holds only audio of a
    // context that must wait for the current one to end. take() removes it.
    const outgoing_message* next() const;
    outgoing_message take();

    std::vector<audio_receipt> drop_audio();

    std::int64_t queued_audio_us() const { return audio_us_; }
    bool empty() const { return messages_.empty(); }

private:
    bool within_limits() const;

    std::int64_t hard_limit_us_;
    std::size_t max_events_;
    std::deque<outgoing_message> messages_;
    std::int64_t audio_us_ = 0;
    std::size_t events_ = 0;
    std::uint32_t streaming_context_ = 0;  // context whose audio is on the wire and not ended; 0: none
};

}  // namespace megatts

// strand: a serial executor. Tasks posted to one strand run one at a time, in the order they
// were posted, on whatever thread the implementation chooses; tasks of different strands run
// concurrently. Every session's CPU stages and events run on its own strand, so a session's
// state needs no lock, and no session owns a thread.
//
// Contract: post() may be called from any thread, never blocks and never runs the task
// inline (a caller holding a lock may post). A task must not throw; it must not block on
// another task of the same strand. The daemon implements strand over an Asio strand of its
// io_context pool; thread_pool.h gives one for tests and tools. pipeline/ sees only this
// interface (it includes no Asio).
//
// Bound: a strand's own queue holds what its callers post; megatts callers post at most one
// pending drain per queue they feed (see frame_queue.h), so the depth stays a small constant
// per session.
#pragma once

#include <functional>

namespace megatts {

using strand_task = std::function<void()>;

class strand {
public:
    virtual ~strand() = default;
    virtual void post(strand_task task) = 0;
};

}  // namespace megatts

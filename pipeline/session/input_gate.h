// input_gate: the session's call protocol (tts_session.h) as a state machine: which calls are
// accepted in which state, what they cost against the limits, and which frames they put in the
// session's input queue. Keeping it apart from the queue lets a call be checked completely
// before anything changes: a refused call changes nothing.
//
// Contract: plan_*() are pure: they return the frames a call produces and the state it leads
// to, or the call's error. commit() applies a plan. The owner serialises all of it (the
// session's mutex) and commits only plans made from the current state. An utterance is "live"
// from its start until finished() (done, failed) or cancel(); at most 1 + max_queued_utterances
// are live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/graph/frame.h"
#include "pipeline/model/model_config.h"
#include "pipeline/session/session_limits.h"
#include "pipeline/session/session_result.h"
#include "pipeline/session/tts_session.h"

namespace megatts {

class input_gate {
public:
    input_gate(const model_config& config, const session_limits& limits);

    struct state {
        enum class phase { idle, open, flushed } at = phase::idle;
        utterance_options options;     // of the open utterance, or carried over by a flush
        std::uint32_t context = 0;     // the open (or last) utterance
        std::size_t text_bytes = 0;    // of the open utterance
        int live = 0;
        bool closed = false;
    };
    struct plan {
        state next;
        std::vector<std::pair<std::uint32_t, frame_payload>> frames;  // (context, payload), in order
    };

    session_result<plan> plan_start(const utterance_options& options) const;
    session_result<plan> plan_text(std::string_view chunk, text_end after) const;
    session_result<plan> plan_close(text_end how) const;  // flush() or end()

    void commit(plan p) { state_ = std::move(p.next); }
    void finished() { --state_.live; }
    // Every utterance is gone; the next text needs a start().
    void cancel();
    void close() { state_.closed = true; }

private:
    std::optional<session_error> check_options(const utterance_options& options) const;
    // Opens utterance context + 1 with `options` in `p`.
    session_status open(plan& p, const utterance_options& options) const;
    // Closes the open utterance's text in `p` (how: flush or end).
    session_result<plan> close_text(plan p, text_end how) const;

    const model_config& config_;
    session_limits limits_;
    state state_;
};

}  // namespace megatts

// launch_timer: when a piece of GPU work on one stream (a launch, or a few back to back) ran,
// measured with CUDA events and mapped onto the host's steady clock, for the engine's step
// spans and its TTFA marks (DESIGN.md §1: stage-by-stage TTFA from CUDA events).
//
// How: begin() and end() record an event pair on the caller's stream around the work; read(),
// called once the caller has synchronised with that stream, turns the pair into host times:
// anchor_host + cudaEventElapsedTime(anchor, event). The anchor is an event that begin()
// records on a stream of the timer's own, always idle, with the host time taken right after
// that call; the GPU timestamps an idle stream's event within a few microseconds of it, which
// is the mapping's error (the timed stream may still hold queued work, a wait for another
// stream's included). begin() re-anchors once the anchor is older than a second, so that
// neither float milliseconds nor the drift between the GPU's and the host's clocks grows with
// uptime. Nothing here synchronises: read() of a pair the GPU has not finished gives nullopt.
//
// Contract: create() makes three events and a stream (unavailable when CUDA cannot). begin(),
// end(), read() on the thread that owns the stream, in that order. `stream` is a cudaStream_t
// passed as void*, so that this header needs no CUDA. Errors of begin()/end() are CUDA errors
// (named, file:line). A build without CUDA has create() fail.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "kernels/common/result.h"

namespace megatts {

struct host_span {
    std::chrono::steady_clock::time_point begin, end;
};

class launch_timer {
public:
    static result<std::unique_ptr<launch_timer>> create();
    ~launch_timer();
    launch_timer(const launch_timer&) = delete;
    launch_timer& operator=(const launch_timer&) = delete;

    result<void> begin(void* stream);
    result<void> end(void* stream);
    // The pair recorded since the last read(), once; nullopt when there is none or it is not
    // complete.
    std::optional<host_span> read();

    struct impl;

private:
    explicit launch_timer(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace megatts

// session_event_relay: the session_events a connection hands to its tts_session, forwarding
// each event to the connection while it is alive.
//
// Why: the session keeps its session_events alive (shared_ptr) while the connection keeps the
// session; if the connection were the session_events itself, each would keep the other alive
// forever. The relay holds the connection weakly, so a connection that ended is simply gone and
// events for it are dropped.
//
// Contract: Target has the session_events methods (same names and arguments). Events are
// delivered on the session's strand, which is the connection's strand, so forwarding needs no
// lock. Never blocks.
#pragma once

#include <memory>

#include "pipeline/session/session_events.h"

namespace megatts {

template <class Target>
class session_event_relay final : public session_events {
public:
    explicit session_event_relay(std::weak_ptr<Target> target) : target_(std::move(target)) {}

    void on_started(const utterance_started& e) override { forward([&](Target& t) { t.on_started(e); }); }
    void on_audio(const audio_chunk& e) override { forward([&](Target& t) { t.on_audio(e); }); }
    void on_metrics(const utterance_metrics& e) override { forward([&](Target& t) { t.on_metrics(e); }); }
    void on_done(const utterance_done& e) override { forward([&](Target& t) { t.on_done(e); }); }
    void on_stall(const stall_notice& e) override { forward([&](Target& t) { t.on_stall(e); }); }
    void on_error(std::uint32_t context, const session_error& e) override {
        forward([&](Target& t) { t.on_error(context, e); });
    }

private:
    template <class Fn>
    void forward(Fn&& fn) {
        if (auto target = target_.lock()) fn(*target);
    }

    std::weak_ptr<Target> target_;
};

}  // namespace megatts

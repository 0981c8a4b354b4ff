// session_registry: the live sessions of the process (WebSocket connections and speech
// requests), so that a drain (SIGTERM) can ask each to go away (PROTOCOL.md §1, DESIGN.md §6)
// and /readyz can count them.
//
// Contract: a session adds itself once admitted and removes itself when it ends; the registry
// holds weak references only, so it never keeps a session alive. Its size is bounded by the
// service's max_sessions, since only admitted sessions are added. for_each calls `fn` outside
// the lock on the sessions still alive. Thread: any; add/remove/size take a short mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace megatts {

// What a drain needs from a session: to close with 1001 once its work in progress is done
// (go_away), or at once when the drain budget is spent (close_now). Neither may block;
// implementations post to their own strand.
class drainable {
public:
    virtual ~drainable() = default;
    virtual void go_away() = 0;
    virtual void close_now() = 0;
};

class session_registry {
public:
    std::uint64_t add(std::weak_ptr<drainable> session);
    void remove(std::uint64_t id);
    std::size_t size() const;
    void for_each(const std::function<void(drainable&)>& fn) const;

private:
    mutable std::mutex mutex_;
    std::uint64_t next_id_ = 1;
    std::map<std::uint64_t, std::weak_ptr<drainable>> sessions_;
};

}  // namespace megatts

#include "daemon/server/session_registry.h"

#include <vector>

namespace megatts {

std::uint64_t session_registry::add(std::weak_ptr<drainable> session) {
    std::lock_guard lock(mutex_);
    const auto id = next_id_++;
    sessions_.emplace(id, std::move(session));
    return id;
}

void session_registry::remove(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    sessions_.erase(id);
}

std::size_t session_registry::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

void session_registry::for_each(const std::function<void(drainable&)>& fn) const {
    std::vector<std::shared_ptr<drainable>> alive;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, weak] : sessions_)
            if (auto session = weak.lock()) alive.push_back(std::move(session));
    }
    for (const auto& session : alive) fn(*session);
}

}  // namespace megatts

#include "pipeline/engine/engine_job.h"

#include <utility>

namespace megatts {

engine_job::engine_job(frame_header header, engine_request request, std::weak_ptr<engine_client> client)
    : header_(header), request_(std::move(request)), client_(std::move(client)) {}

void engine_job::add_ids(std::span<const std::int32_t> ids, bool last) {
    std::lock_guard lock(mutex_);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    closed_ = last;
}

engine_job::id_count engine_job::count() const {
    std::lock_guard lock(mutex_);
    return {ids_.size(), closed_};
}

std::int32_t engine_job::id_at(std::size_t index) const {
    std::lock_guard lock(mutex_);
    return ids_[index];
}

std::vector<std::int32_t> engine_job::ids() const {
    std::lock_guard lock(mutex_);
    return ids_;
}

}  // namespace megatts

#include "pipeline/graph/frame_queue.h"

#include <utility>

namespace megatts {

frame_queue::frame_queue(frame_queue_limits limits, gauge* depth) : limits_(limits), depth_(depth) {}

frame_queue::~frame_queue() { count(-static_cast<double>(system_.size() + ordered_.size())); }

bool frame_queue::push(frame f) {
    const bool system = class_of(f) == frame_class::system;
    {
        std::lock_guard lock(mutex_);
        auto& lane = system ? system_ : ordered_;
        if (lane.size() >= (system ? limits_.system : limits_.ordered)) return false;
        lane.push_back(std::move(f));
    }
    count(1);
    return true;
}

bool frame_queue::has_room(std::size_t n) const {
    std::lock_guard lock(mutex_);
    return ordered_.size() + n <= limits_.ordered;
}

std::optional<frame> frame_queue::pop(std::uint32_t epoch) {
    std::optional<frame> out;
    std::size_t dropped = 0;
    {
        std::lock_guard lock(mutex_);
        if (!system_.empty()) {
            out = std::move(system_.front());
            system_.pop_front();
        }
        while (!out && !ordered_.empty()) {
            frame f = std::move(ordered_.front());
            ordered_.pop_front();
            if (f.header.epoch < epoch) {
                ++dropped;
                continue;
            }
            out = std::move(f);
        }
    }
    count(-static_cast<double>(dropped + (out ? 1 : 0)));
    return out;
}

std::size_t frame_queue::size() const {
    std::lock_guard lock(mutex_);
    return system_.size() + ordered_.size();
}

void frame_queue::count(double delta) {
    if (depth_ && delta != 0) depth_->add(delta);
}

}  // namespace megatts

#include "daemon/server/send_queue.h"

#include <algorithm>
#include <utility>

namespace megatts {

send_queue::send_queue(std::int64_t hard_limit_us, std::size_t max_events)
    : hard_limit_us_(hard_limit_us), max_events_(max_events) {}

bool send_queue::within_limits() const { return audio_us_ <= hard_limit_us_ && events_ <= max_events_; }

bool send_queue::push(outgoing_message message) {
    audio_us_ += message.duration_us();
    if (message.role == message_role::event) ++events_;
    messages_.push_back(std::move(message));
    return within_limits();
}

bool send_queue::push_context_end(outgoing_message audio_end, outgoing_message done) {
    const auto context = audio_end.context;
    auto later = std::find_if(messages_.begin(), messages_.end(),
                              [context](const outgoing_message& m) { return m.context > context; });
    ++events_;
    later = messages_.insert(later, std::move(done));
    messages_.insert(later, std::move(audio_end));
    return within_limits();
}

const outgoing_message* send_queue::next() const {
    if (messages_.empty()) return nullptr;
    const auto& front = messages_.front();
    const bool held = front.binary() && streaming_context_ != 0 && front.context != streaming_context_;
    return held ? nullptr : &front;
}

outgoing_message send_queue::take() {
    outgoing_message message = std::move(messages_.front());
    messages_.pop_front();
    audio_us_ -= message.duration_us();
    if (message.role == message_role::event) --events_;
    if (message.role == message_role::audio) streaming_context_ = message.context;
    if (message.role == message_role::audio_end) streaming_context_ = 0;
    return message;
}

std::vector<audio_receipt> send_queue::drop_audio() {
    std::vector<audio_receipt> dropped;
    std::erase_if(messages_, [&](const outgoing_message& m) {
        if (m.role != message_role::audio) return false;
        dropped.push_back(*m.receipt);
        audio_us_ -= m.duration_us();
        return true;
    });
    streaming_context_ = 0;
    return dropped;
}

}  // namespace megatts


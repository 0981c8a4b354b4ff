#include "pipeline/graph/thread_pool.h"

#include <utility>

namespace megatts {

// Runs its tasks one at a time: while a turn is queued or running, posts only append, and the
// turn re-submits itself while tasks remain, so at most one turn per strand sits in the pool.
class thread_pool::pool_strand final : public strand, public std::enable_shared_from_this<pool_strand> {
public:
    explicit pool_strand(thread_pool& pool) : pool_(&pool) {}

    void post(strand_task task) override {
        bool schedule = false;
        {
            std::lock_guard lock(mutex_);
            tasks_.push_back(std::move(task));
            schedule = !scheduled_;
            scheduled_ = true;
        }
        if (schedule) pool_->submit([self = shared_from_this()] { self->turn(); });
    }

private:
    void turn() {
        strand_task task;
        {
            std::lock_guard lock(mutex_);
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        task();
        bool more = false;
        {
            std::lock_guard lock(mutex_);
            more = !tasks_.empty();
            scheduled_ = more;
        }
        if (more) pool_->submit([self = shared_from_this()] { self->turn(); });
    }

    thread_pool* pool_;
    std::mutex mutex_;
    std::deque<strand_task> tasks_;
    bool scheduled_ = false;
};

thread_pool::thread_pool(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

thread_pool::~thread_pool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_all();
    for (auto& w : workers_) w.join();
}

std::shared_ptr<strand> thread_pool::make_strand() { return std::make_shared<pool_strand>(*this); }

void thread_pool::submit(std::function<void()> turn) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(turn));
    }
    ready_.notify_one();
}

void thread_pool::work() {
    for (;;) {
        std::function<void()> turn;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;
            turn = std::move(queue_.front());
            queue_.pop_front();
        }
        turn();
    }
}

}  // namespace megatts

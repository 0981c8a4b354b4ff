// thread_pool: a fixed set of worker threads and the strands (strand.h) that run on them: the
// executor of the unit tests and of tools that have no Asio io_context.
//
// Contract: the pool starts its threads in the constructor and joins them in the destructor,
// after running every task posted before destruction began. make_strand() may be called from
// any thread; a strand may outlive the pool only if nothing is posted to it afterwards.
// Tasks must not throw. Blocking: the destructor blocks until the queue is empty.
// Bound: the queue holds one entry per strand with pending work (a strand re-posts itself only
// after its previous turn ran), so its depth is at most the number of live strands.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/graph/strand.h"

namespace megatts {

class thread_pool {
public:
    explicit thread_pool(int threads);
    ~thread_pool();
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    std::shared_ptr<strand> make_strand();

private:
    class pool_strand;

    void submit(std::function<void()> turn);
    void work();

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> queue_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace megatts

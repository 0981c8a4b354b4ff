// server: the network side of `megatts serve`: an io_context run by a pool of threads, the
// listener, and the drain on SIGINT/SIGTERM (DESIGN.md §6): /readyz turns 503 and new WebSocket
// upgrades and speech requests are refused with 503 (the port keeps answering, so that a
// balancer's health check sees the 503 and its retry goes elsewhere), live sessions finish
// their utterances for server.drain_timeout_s, the rest are closed with 1001, then it stops.
//
// Contract: create() binds the port (errors name the address), or adopts `inherited_fd`, a
// socket systemd already listens on (socket activation), but runs nothing; start() runs
// the io_context on `threads` threads and accepts; wait() blocks until the drain finished and
// every thread has joined. The server_context must outlive the server, and the server must be
// destroyed before the tts_service: destroying it destroys the connections, which close their
// sessions. request_stop() starts the drain from any thread (as a signal does). The hook given
// to on_drain() (before start) runs once, on an io_context thread, when a drain begins.
// Thread: create/start/wait from the main thread; request_stop from any.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/server/listener.h"
#include "daemon/server/server_context.h"
#include "kernels/common/result.h"

namespace megatts {

class server {
public:
    static result<std::unique_ptr<server>> create(server_context& context, std::optional<int> inherited_fd);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    boost::asio::ip::tcp::endpoint endpoint() const { return listener_->endpoint(); }
    boost::asio::io_context& io_context() { return ioc_; }

    void on_drain(std::function<void()> hook) { on_drain_ = std::move(hook); }
    void start(int threads);
    void request_stop();
    void wait();

private:
    explicit server(server_context& context);
    void drain();
    void poll_drained(std::chrono::steady_clock::time_point force_at, bool forced);

    server_context& context_;
    boost::asio::io_context ioc_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer drain_timer_;
    std::shared_ptr<listener> listener_;
    std::vector<std::thread> threads_;
    std::function<void()> on_drain_;
    std::atomic<bool> draining_{false};  // the phase may be failed instead of draining
};

}  // namespace megatts

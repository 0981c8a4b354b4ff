// service_heartbeat: the thread that keeps systemd informed while `megatts serve` runs
// (DESIGN.md §6). Each tick it posts the watchdog_gate's probe to the event loop, then:
//   - loading, warming up: STATUS= and EXTEND_TIMEOUT_USEC= (three ticks ahead), until
//     `start_timeout` after the start has passed, so that a load that hangs still times out;
//   - ready, draining: WATCHDOG=1 when systemd asked for a watchdog and the gate says feed
//     (event loop and engine both made progress), and STATUS= when the session count changed.
// A verdict other than feed is logged (error) when it begins and (info) when it ends.
// READY=1 and STOPPING=1 are not its business: the code that changes the phase sends them, so
// that they go out at once.
//
// Contract: start() runs the thread, unless the notifier is inactive (no systemd listening);
// stop() and the destructor end it and join within one tick. The notifier, the server context
// and the io_context must outlive it; the io_context may stop first (probes then only queue).
// Tick: a quarter of WatchdogSec, at most one second; the gate's limit is half of WatchdogSec.
// Thread: start/stop from one owner thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "daemon/server/server_context.h"
#include "daemon/systemd/service_notifier.h"
#include "daemon/systemd/watchdog_gate.h"

namespace megatts {

class service_heartbeat {
public:
    using clock = std::chrono::steady_clock;

    service_heartbeat(service_notifier& notifier, server_context& context, boost::asio::io_context& ioc,
                      clock::time_point started, std::chrono::seconds start_timeout);
    ~service_heartbeat();
    service_heartbeat(const service_heartbeat&) = delete;
    service_heartbeat& operator=(const service_heartbeat&) = delete;

    void start();
    void stop();

private:
    void run();
    void tick();
    void starting(server_phase phase);
    void serving(server_phase phase);
    void feed_watchdog();

    service_notifier& notifier_;
    server_context& context_;
    boost::asio::io_context& ioc_;
    const clock::time_point started_;
    const std::chrono::seconds start_timeout_;
    const clock::duration tick_;
    std::shared_ptr<watchdog_gate> gate_;  // shared with the probes queued on the event loop

    watchdog_verdict last_verdict_ = watchdog_verdict::feed;
    std::string last_status_;

    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace megatts

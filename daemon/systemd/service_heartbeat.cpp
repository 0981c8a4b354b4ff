#include "daemon/systemd/service_heartbeat.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace megatts {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

constexpr std::chrono::seconds longest_tick{1};

service_heartbeat::clock::duration tick_for(const service_notifier& notifier) {
    const auto watchdog = notifier.watchdog_interval();
    if (!watchdog) return longest_tick;
    return std::clamp<service_heartbeat::clock::duration>(*watchdog / 4, std::chrono::milliseconds(1), longest_tick);
}

double seconds_of(watchdog_gate::clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

service_heartbeat::service_heartbeat(service_notifier& notifier, server_context& context,
                                     boost::asio::io_context& ioc, clock::time_point started,
                                     std::chrono::seconds start_timeout)
    : notifier_(notifier),
      context_(context),
      ioc_(ioc),
      started_(started),
      start_timeout_(start_timeout),
      tick_(tick_for(notifier)),
      // Without a watchdog the gate is never asked.
      gate_(std::make_shared<watchdog_gate>(notifier.watchdog_interval().value_or(microseconds::zero()) / 2)) {}

service_heartbeat::~service_heartbeat() { stop(); }

void service_heartbeat::start() {
    if (!notifier_.active() || thread_.joinable()) return;
    thread_ = std::thread([this] { run(); });
}

void service_heartbeat::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void service_heartbeat::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        tick();
        lock.lock();
        wake_.wait_for(lock, tick_, [this] { return stopping_; });
    }
}

void service_heartbeat::tick() {
    boost::asio::post(ioc_, [gate = gate_] { gate->loop_ran(); });
    const auto phase = context_.phase();
    if (phase == server_phase::loading || phase == server_phase::warming_up)
        starting(phase);
    else
        serving(phase);
}

void service_heartbeat::starting(server_phase phase) {
    if (clock::now() - started_ >= start_timeout_) return;  // no more extensions: systemd's timeout decides
    notifier_.extend_timeout(duration_cast<microseconds>(3 * tick_));
    const auto status = phase == server_phase::loading ? "loading model " + context_.model().name : "warming up";
    if (status != last_status_) {
        notifier_.status(status);
        last_status_ = status;
    }
}

void service_heartbeat::serving(server_phase phase) {
    if (notifier_.watchdog_interval()) feed_watchdog();
    const auto sessions = context_.sessions().size();
    const auto status = phase == server_phase::draining
                            ? "draining: " + std::to_string(sessions) + " session(s) left"
                            : "ready: " + std::to_string(sessions) + " of " +
                                  std::to_string(context_.config().server.max_sessions) + " sessions";
    if (status != last_status_) {
        notifier_.status(status);
        last_status_ = status;
    }
}

void service_heartbeat::feed_watchdog() {
    const auto* service = context_.service_if_loaded();
    const auto busy = service ? service->engine_busy_for() : clock::duration::zero();
    const auto verdict = gate_->check(busy);
    if (verdict == watchdog_verdict::feed) notifier_.watchdog();
    if (verdict == last_verdict_) return;
    if (verdict == watchdog_verdict::feed) {
        spdlog::info("watchdog: progress again; feeding systemd's watchdog");
    } else {
        spdlog::error("watchdog: {} (event loop silent for {:.1f} s, engine in one step for {:.1f} s, limit {:.1f} s); "
                      "not feeding systemd's watchdog",
                      watchdog_verdict_name(verdict), seconds_of(gate_->loop_silent_for()), seconds_of(busy),
                      seconds_of(gate_->limit()));
    }
    last_verdict_ = verdict;
}

}  // namespace megatts

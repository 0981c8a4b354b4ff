// service_notifier: the messages of a Type=notify service to systemd's notification socket
// (sd_notify(3)): STATUS= (a line for `systemctl status`), READY=1, EXTEND_TIMEOUT_USEC=,
// WATCHDOG=1 and STOPPING=1.
//
// Contract: the environment is read once, at construction. Without NOTIFY_SOCKET (megatts run
// by hand) every call does nothing. watchdog_interval() is WatchdogSec as systemd passed it
// (WATCHDOG_USEC, for this process: WATCHDOG_PID, when set, must be ours), or nothing. Status
// text is one line: line breaks become spaces. A failed send is logged at debug level and
// otherwise ignored: a lost notification must never stop the service, systemd's own timeouts
// decide then. Thread: any; each call is one datagram. Blocking: one sendmsg.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace megatts {

class service_notifier {
public:
    service_notifier();

    bool active() const { return active_; }
    std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }

    void status(std::string_view text);
    void ready(std::string_view status_text);
    void stopping(std::string_view status_text);
    // The current state (start-up, here) must send again within `within` or time out.
    void extend_timeout(std::chrono::microseconds within);
    void watchdog();

private:
    void send(const std::string& message);

    bool active_ = false;
    std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace megatts

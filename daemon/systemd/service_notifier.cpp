#include "daemon/systemd/service_notifier.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

namespace megatts {
namespace {

std::string status_line(std::string_view text) {
    std::string line = "STATUS=";
    for (char c : text) line += c == '\n' || c == '\r' ? ' ' : c;
    return line;
}

}  // namespace

service_notifier::service_notifier() {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    active_ = socket != nullptr && *socket != '\0';
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ = std::chrono::microseconds(usec);
}

void service_notifier::status(std::string_view text) { send(status_line(text)); }

void service_notifier::ready(std::string_view status_text) { send("READY=1\n" + status_line(status_text)); }

void service_notifier::stopping(std::string_view status_text) { send("STOPPING=1\n" + status_line(status_text)); }

void service_notifier::extend_timeout(std::chrono::microseconds within) {
    send("EXTEND_TIMEOUT_USEC=" + std::to_string(within.count()));
}

void service_notifier::watchdog() { send("WATCHDOG=1"); }

void service_notifier::send(const std::string& message) {
    if (!active_) return;
    if (const int r = sd_notify(0, message.c_str()); r < 0)
        spdlog::debug("sd_notify failed: {}", std::strerror(-r));
}

}  // namespace megatts

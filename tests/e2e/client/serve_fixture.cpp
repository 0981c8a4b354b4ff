#include "tests/e2e/client/serve_fixture.h"

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "daemon/bench/metrics_text.h"
#include "daemon/client/http_client.h"

namespace megatts::e2e {
namespace {

using clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds poll_interval{100};

// Gauges of work in progress: each must be back to zero once every client has gone.
constexpr const char* live_gauges[] = {
    "megatts_sessions",
    "megatts_engine_active_utterances",
    "megatts_websocket_connections",
    "megatts_queue_depth",
    "megatts_send_queue_seconds",
    "megatts_stalled_sessions",
};

// The gauges of live work that are not zero, and /readyz's session count, as text; empty when idle.
std::string busy_gauges(std::uint16_t port) {
    auto metrics = client::http_fetch(port, "GET", "/metrics");
    auto ready = client::http_fetch(port, "GET", "/readyz");
    if (!metrics || !ready) return "the server does not answer /metrics or /readyz";
    std::string busy;
    for (const auto& s : bench::parse_metrics_text(metrics->body)) {
        for (const char* name : live_gauges)
            if (s.name == name && s.value != 0)
                busy += " " + s.name + (s.labels.empty() ? "" : "{" + s.labels + "}") + "=" + std::to_string(s.value);
    }
    const auto sessions = nlohmann::json::parse(ready->body, nullptr, false).value("sessions", -1);
    if (sessions != 0) busy += " readyz.sessions=" + std::to_string(sessions);
    return busy;
}

}  // namespace

result<std::unique_ptr<serve_fixture>> serve_fixture::start(const std::filesystem::path& work,
                                                            const std::string& binary, const std::string& config_toml,
                                                            const std::vector<std::string>& extra_args,
                                                            std::chrono::seconds timeout) {
    std::unique_ptr<serve_fixture> f(new serve_fixture(work));
    std::filesystem::create_directories(work);
    std::ofstream(work / "megatts.toml") << config_toml;
    std::vector<std::string> args = {"serve", "--config", (work / "megatts.toml").string()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    auto port = f->process_.start(binary, args, work / "server.log", timeout);
    if (!port) return port.err();
    f->port_ = *port;
    const auto deadline = clock::now() + timeout;
    while (clock::now() < deadline) {
        auto ready = client::http_fetch(f->port_, "GET", "/readyz");
        if (ready && ready->status == 200) return f;
        std::this_thread::sleep_for(poll_interval);
    }
    return make_error(error_kind::unavailable,
                      "the server did not become ready in time; see " + (work / "server.log").string());
}

result<void> serve_fixture::wait_until_idle(std::chrono::milliseconds timeout) const {
    const auto deadline = clock::now() + timeout;
    std::string busy = busy_gauges(port_);
    while (!busy.empty() && clock::now() < deadline) {
        std::this_thread::sleep_for(poll_interval);
        busy = busy_gauges(port_);
    }
    if (!busy.empty()) return make_error(error_kind::mismatch, "still busy:" + busy);
    return {};
}

}  // namespace megatts::e2e

// serve_fixture: one `megatts serve` for a test program: its work directory, configuration
// file, process and port, started and waited for until /readyz says ready.
//
// Contract: start() writes `config_toml` to WORK/megatts.toml, spawns `binary serve --config
// it` plus `extra_args` (its output in WORK/server.log), and returns once /readyz answers 200,
// or an error naming the log when the server prints no URL or is not ready within `timeout`.
// The destructor kills a server still running (server_process.h). wait_until_idle() polls
// /metrics until every gauge of live work is back to zero (sessions, engine utterances,
// WebSocket connections, queue depths, send queue) and /readyz counts no session; its error
// lists the gauges that stayed up. Thread: one owner. Blocking: up to the timeouts.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/result.h"
#include "tests/e2e/client/server_process.h"

namespace megatts::e2e {

class serve_fixture {
public:
    static result<std::unique_ptr<serve_fixture>> start(const std::filesystem::path& work, const std::string& binary,
                                                        const std::string& config_toml,
                                                        const std::vector<std::string>& extra_args,
                                                        std::chrono::seconds timeout);

    std::uint16_t port() const { return port_; }
    pid_t pid() const { return process_.pid(); }
    server_process& process() { return process_; }
    const std::filesystem::path& work() const { return work_; }

    result<void> wait_until_idle(std::chrono::milliseconds timeout) const;

private:
    explicit serve_fixture(std::filesystem::path work) : work_(std::move(work)) {}

    std::filesystem::path work_;
    server_process process_;
    std::uint16_t port_ = 0;
};

}  // namespace megatts::e2e

// bench_latency_server: the `megatts serve` that `megatts bench latency` starts when it is given
// no --url: this same binary, on 127.0.0.1 with a port the kernel picks, its output in a log file.
//
// Contract: start() spawns it with the given serve arguments (it adds --listen
// 127.0.0.1:0), waits until the "listening on http://HOST:PORT/" line is in the log (bounded by
// `timeout`) and returns the port; the model may still be loading then (the client retries).
// The destructor stops it: SIGTERM, then SIGKILL if it has not exited within 30 s, and reaps
// it. One owner thread; blocking, bounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

class bench_latency_server {
public:
    static result<std::unique_ptr<bench_latency_server>> start(const std::vector<std::string>& serve_args,
                                                               const std::filesystem::path& log_file,
                                                               std::chrono::seconds timeout);
    ~bench_latency_server();
    bench_latency_server(const bench_latency_server&) = delete;
    bench_latency_server& operator=(const bench_latency_server&) = delete;

    std::uint16_t port() const { return port_; }

private:
    bench_latency_server(pid_t pid, std::uint16_t port) : pid_(pid), port_(port) {}

    pid_t pid_;
    std::uint16_t port_;
};

}  // namespace megatts

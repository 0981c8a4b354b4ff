// server_process: `megatts serve` as a child process for the e2e tests, and `megatts say` runs
// to compare with.
//
// Contract: start() spawns the binary with the given arguments, reads its standard output until
// the "listening on http://HOST:PORT/" line (bounded by `timeout`) and returns the port; the
// rest of its output goes to a log file for the test's diagnostics. stop() sends SIGTERM (the
// drain) and waits up to `timeout` for the exit status; the destructor kills (SIGKILL) a child
// still running, so a failing test never leaves a server behind. run_command() runs a program
// to completion with a time limit (SIGKILL past it) and returns its exit status.
// Thread: one owner. Blocking: yes, bounded by the timeouts given.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::e2e {

class server_process {
public:
    server_process() = default;
    ~server_process();
    server_process(const server_process&) = delete;
    server_process& operator=(const server_process&) = delete;

    result<std::uint16_t> start(const std::string& binary, const std::vector<std::string>& args,
                                const std::filesystem::path& log_file, std::chrono::seconds timeout);
    // The exit status after SIGTERM, or an error if it did not exit in time.
    result<int> stop(std::chrono::seconds timeout);
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
};

result<int> run_command(const std::string& binary, const std::vector<std::string>& args, std::chrono::seconds timeout,
                        const std::filesystem::path& output_file);

}  // namespace megatts::e2e

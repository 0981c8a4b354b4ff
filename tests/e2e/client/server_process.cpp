#include "tests/e2e/client/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

extern char** environ;

namespace megatts::e2e {
namespace {

using clock = std::chrono::steady_clock;

std::vector<char*> argv_of(const std::string& binary, const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    return argv;
}

// Waits for `pid` until `deadline`; the exit status, or nothing if it is still running.
std::optional<int> wait_until(pid_t pid, clock::time_point deadline) {
    for (;;) {
        int status = 0;
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 || clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace

server_process::~server_process() {
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
}

result<std::uint16_t> server_process::start(const std::string& binary, const std::vector<std::string>& args,
                                            const std::filesystem::path& log_file, std::chrono::seconds timeout) {
    int out[2];
    if (pipe(out) != 0) return make_error(error_kind::io, std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    auto argv = argv_of(binary, args);
    const int spawned = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (spawned != 0) {
        close(out[0]);
        pid_ = -1;
        return make_error(error_kind::io, binary + ": " + std::strerror(spawned));
    }

    // Read the output until the URL line, copying everything to the log; afterwards a thread
    // keeps copying, so the server never blocks on a full pipe.
    std::ofstream log(log_file);
    const std::regex url(R"(listening on http://[^ ]*:([0-9]+)/)");
    const auto deadline = clock::now() + timeout;
    std::string pending;
    std::optional<std::uint16_t> port;
    while (!port && clock::now() < deadline) {
        pollfd p{out[0], POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        char chunk[4096];
        const ssize_t n = read(out[0], chunk, sizeof chunk);
        if (n <= 0) break;
        log.write(chunk, n);
        pending.append(chunk, static_cast<std::size_t>(n));
        std::smatch m;
        if (std::regex_search(pending, m, url)) port = static_cast<std::uint16_t>(std::stoi(m[1]));
    }
    log.flush();
    std::thread([fd = out[0], path = log_file] {
        std::ofstream rest(path, std::ios::app);
        char chunk[4096];
        for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) > 0;) rest.write(chunk, n).flush();
        close(fd);
    }).detach();
    if (!port) return make_error(error_kind::unavailable, binary + " printed no URL within the time limit; see " +
                                                              log_file.string());
    return *port;
}

result<int> server_process::stop(std::chrono::seconds timeout) {
    if (pid_ <= 0) return make_error(error_kind::invalid_input, "no server running");
    kill(pid_, SIGTERM);
    auto status = wait_until(pid_, clock::now() + timeout);
    if (!status) return make_error(error_kind::unavailable, "the server did not exit after SIGTERM");
    pid_ = -1;
    return *status;
}

result<int> run_command(const std::string& binary, const std::vector<std::string>& args, std::chrono::seconds timeout,
                        const std::filesystem::path& output_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    auto argv = argv_of(binary, args);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return make_error(error_kind::io, binary + ": " + std::strerror(spawned));
    auto status = wait_until(pid, clock::now() + timeout);
    if (!status) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        return make_error(error_kind::unavailable, binary + " did not finish within the time limit");
    }
    return *status;
}

}  // namespace megatts::e2e

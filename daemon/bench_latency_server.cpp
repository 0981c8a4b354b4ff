#include "daemon/bench_latency_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace megatts {
namespace {

using clock = std::chrono::steady_clock;

// Reaps `pid` if it exited by `deadline`; whether it did.
bool reaped_by(pid_t pid, clock::time_point deadline) {
    for (;;) {
        int status = 0;
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || r < 0) return true;
        if (clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::string read_all(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

result<std::unique_ptr<bench_latency_server>> bench_latency_server::start(const std::vector<std::string>& serve_args,
                                                                          const std::filesystem::path& log_file,
                                                                          std::chrono::seconds timeout) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return make_error(error_kind::unavailable, "bench latency: cannot find this binary: " + ec.message());
    std::vector<std::string> args{self.string(), "serve", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), serve_args.begin(), serve_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) return make_error(error_kind::unavailable, "bench latency: cannot write " + log_file.string());
    const pid_t pid = ::fork();
    if (pid == 0) {
        // The child: only async-signal-safe calls until exec.
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(log);
    if (pid < 0) return make_error(error_kind::unavailable, "bench latency: cannot start megatts serve");
    std::unique_ptr<bench_latency_server> server(new bench_latency_server(pid, 0));
    const std::regex url(R"(listening on http://[^ ]*:([0-9]+)/)");
    const auto deadline = clock::now() + timeout;
    while (clock::now() < deadline) {
        std::smatch m;
        const auto text = read_all(log_file);
        if (std::regex_search(text, m, url)) {
            server->port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
            return server;
        }
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            server->pid_ = -1;  // reaped
            return make_error(error_kind::unavailable, "bench latency: megatts serve exited at start; see " +
                                                           log_file.string());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return make_error(error_kind::unavailable, "bench latency: megatts serve printed no URL within " +
                                                   std::to_string(timeout.count()) + " s; see " + log_file.string());
}

bench_latency_server::~bench_latency_server() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    if (reaped_by(pid_, clock::now() + std::chrono::seconds(30))) return;
    ::kill(pid_, SIGKILL);
    reaped_by(pid_, clock::now() + std::chrono::seconds(5));
}

}  // namespace megatts

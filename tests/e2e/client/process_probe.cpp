#include "tests/e2e/client/process_probe.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace megatts::e2e {

result<std::int64_t> resident_kib(pid_t pid) {
    const auto path = "/proc/" + std::to_string(pid) + "/status";
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6));
    }
    return make_error(error_kind::not_found, path + ": no VmRSS");
}

result<int> open_fds(pid_t pid) {
    std::error_code ec;
    int n = 0;
    for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
         it.increment(ec))
        ++n;
    if (ec) return make_error(error_kind::not_found, "/proc/" + std::to_string(pid) + "/fd: " + ec.message());
    return n;
}

}  // namespace megatts::e2e

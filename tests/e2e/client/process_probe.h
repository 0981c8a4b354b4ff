// process_probe: what /proc tells about a server under test: its resident memory and its open
// file descriptors, for leak checks (RSS flat after warm-up, descriptors back to where they
// were).
//
// Contract: resident_kib reads VmRSS from /proc/PID/status; open_fds counts the entries of
// /proc/PID/fd. Errors: not_found when the process is gone or /proc cannot be read.
// Thread: any; no state.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "kernels/common/result.h"

namespace megatts::e2e {

result<std::int64_t> resident_kib(pid_t pid);
result<int> open_fds(pid_t pid);

}  // namespace megatts::e2e

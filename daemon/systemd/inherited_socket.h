// inherited_socket: the listening socket systemd passes to a socket-activated service
// (megatts.socket; sd_listen_fds(3): LISTEN_FDS, LISTEN_PID, the fds from 3 on).
//
// Contract: nothing when no socket was passed (LISTEN_PID unset or naming another process):
// the daemon then binds server.listen itself. Otherwise exactly one fd, a listening TCP socket
// (IPv4 or IPv6); anything else is an invalid_input error that says what was passed. The
// LISTEN_* variables are removed from the environment, so a second call finds nothing, and
// the fd is close-on-exec (sd_listen_fds does both). Thread: the main thread, before other
// threads read the environment.
#pragma once

#include <optional>

#include "kernels/common/result.h"

namespace megatts {

result<std::optional<int>> inherited_listen_socket();

}  // namespace megatts

#include "daemon/systemd/inherited_socket.h"

#include <sys/socket.h>

#include <cstring>
#include <string>

#include <systemd/sd-daemon.h>

namespace megatts {

result<std::optional<int>> inherited_listen_socket() {
    const int count = sd_listen_fds(1);
    if (count < 0)
        return make_error(error_kind::invalid_input, std::string("LISTEN_FDS: ") + std::strerror(-count));
    if (count == 0) return std::optional<int>();
    if (count != 1)
        return make_error(error_kind::invalid_input, "systemd passed " + std::to_string(count) +
                                                         " sockets (LISTEN_FDS); megatts serve listens on exactly one");
    const int fd = SD_LISTEN_FDS_START;
    if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, 1, 0) <= 0)
        return make_error(error_kind::invalid_input,
                          "the socket systemd passed (fd 3) is not a listening TCP socket; use ListenStream= with an "
                          "address and port in megatts.socket");
    return std::optional<int>(fd);
}

}  // namespace megatts

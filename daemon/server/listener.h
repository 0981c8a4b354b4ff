// listener: accepts TCP connections on the server's port and starts an http_session for each,
// on a strand of its own (HTTP and WebSocket share the port; the upgrade decides later), with
// TCP_NODELAY set so that no packet waits to be coalesced.
//
// Contract: create() opens, binds and listens synchronously, so that a bad address or a busy
// port is an error before anything runs (io error naming the address); adopt() takes a socket
// that already listens (systemd's socket activation) instead. endpoint() then gives the actual
// port (the system's choice for port 0). run() starts accepting on the io_context;
// stop() closes the acceptor (drain): connections already accepted carry on. An accept error
// is logged and accepting continues, except when the acceptor was closed.
// Thread: create/endpoint from any thread before run; run/stop on the io_context.
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "daemon/config/listen_address.h"
#include "daemon/server/server_context.h"
#include "kernels/common/result.h"

namespace megatts {

class listener : public std::enable_shared_from_this<listener> {
public:
    static result<std::shared_ptr<listener>> create(boost::asio::io_context& ioc, const listen_address& address,
                                                    server_context& server);
    static result<std::shared_ptr<listener>> adopt(boost::asio::io_context& ioc, int listening_fd,
                                                   server_context& server);

    boost::asio::ip::tcp::endpoint endpoint() const;
    void run();
    void stop();

private:
    listener(boost::asio::io_context& ioc, boost::asio::ip::tcp::acceptor acceptor, server_context& server);
    void do_accept();

    boost::asio::io_context& ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    server_context& server_;
};

}  // namespace megatts

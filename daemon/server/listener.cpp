#include "daemon/server/listener.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <spdlog/spdlog.h>

#include "daemon/http/http_session.h"

namespace megatts {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

}  // namespace

result<std::shared_ptr<listener>> listener::create(net::io_context& ioc, const listen_address& address,
                                                   server_context& server) {
    const auto where = address.host + ":" + std::to_string(address.port);
    boost::system::error_code ec;
    tcp::resolver resolver(ioc);
    const auto results = resolver.resolve(address.host, std::to_string(address.port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty())
        return make_error(error_kind::invalid_input, "listen address " + where + ": " + ec.message());
    const tcp::endpoint endpoint = *results.begin();
    tcp::acceptor acceptor(ioc);
    const auto step = [&](const char* what) {
        return make_error(error_kind::io, "listen on " + where + ": " + what + ": " + ec.message());
    };
    if (acceptor.open(endpoint.protocol(), ec); ec) return step("open");
    if (acceptor.set_option(net::socket_base::reuse_address(true), ec); ec) return step("SO_REUSEADDR");
    if (acceptor.bind(endpoint, ec); ec) return step("bind");
    if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) return step("listen");
    return std::shared_ptr<listener>(new listener(ioc, std::move(acceptor), server));
}

result<std::shared_ptr<listener>> listener::adopt(net::io_context& ioc, int listening_fd, server_context& server) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (getsockname(listening_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
        return make_error(error_kind::io, "inherited socket: getsockname: " + std::string(std::strerror(errno)));
    const auto protocol = address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4();
    boost::system::error_code ec;
    tcp::acceptor acceptor(ioc);
    if (acceptor.assign(protocol, listening_fd, ec); ec)
        return make_error(error_kind::io, "inherited socket: " + ec.message());
    return std::shared_ptr<listener>(new listener(ioc, std::move(acceptor), server));
}

listener::listener(net::io_context& ioc, tcp::acceptor acceptor, server_context& server)
    : ioc_(ioc), acceptor_(std::move(acceptor)), server_(server) {}

tcp::endpoint listener::endpoint() const {
    boost::system::error_code ec;
    return acceptor_.local_endpoint(ec);
}

void listener::run() { net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->do_accept(); }); }

void listener::stop() {
    net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
        boost::system::error_code ignored;
        self->acceptor_.close(ignored);
    });
}

void listener::do_accept() {
    auto strand = net::make_strand(ioc_);
    acceptor_.async_accept(strand, [self = shared_from_this(), strand](boost::system::error_code ec,
                                                                        tcp::socket socket) {
        if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
        if (ec) {
            spdlog::warn("accept failed: {}", ec.message());
        } else {
            // Audio leaves in small messages that must not wait for Nagle's algorithm to
            // coalesce them (measured: 30-40 ms of added latency per first packet on loopback).
            boost::system::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            std::make_shared<http_session>(boost::beast::tcp_stream(std::move(socket)), strand, self->server_)->run();
        }
        self->do_accept();
    });
}

}  // namespace megatts

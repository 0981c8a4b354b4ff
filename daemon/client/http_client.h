// http_client: one HTTP/1.1 request to a megatts server, with a deadline: asynchronous on the
// caller's executor (the load generator polls /metrics beside its WebSocket clients), or
// blocking for tests and tools.
//
// Contract: a fetch connects to host:port (an IP address), sends the request (Content-Type
// application/json when a body is given, plus `headers`), reads the whole response (chunked or
// not; body up to 64 MiB) and closes. The reply carries its status, headers (lower-case names)
// and body, and whether the transfer was chunked. Errors: connect, I/O or the deadline (the
// connection is dropped then). async_http_fetch keeps what it needs alive itself and calls the
// handler once, on the executor. Thread: the executor's; http_fetch runs its own io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "kernels/common/result.h"

namespace megatts::client {

struct http_reply {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    bool chunked = false;
};

struct http_request_spec {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    std::string method = "GET";
    std::string target = "/";
    std::string body;
    std::map<std::string, std::string> headers;
    std::chrono::milliseconds deadline{30000};
};

void async_http_fetch(boost::asio::any_io_executor executor, http_request_spec spec,
                      std::function<void(result<http_reply>)> handler);

result<http_reply> http_fetch(http_request_spec spec);

// On 127.0.0.1.
result<http_reply> http_fetch(std::uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body = {}, const std::map<std::string, std::string>& headers = {},
                              std::chrono::milliseconds deadline = std::chrono::seconds(30));

}  // namespace megatts::client

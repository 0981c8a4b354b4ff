// http_client: one HTTP/1.1 request to the server under test, with a deadline.
//
// Contract: http_fetch connects, sends the request (Content-Type application/json when a body
// is given, plus `headers`), reads the whole response (chunked or not; body up to 64 MiB) and
// closes. Each response carries its status, headers and body, and whether the transfer was
// chunked. Errors: connect, I/O or timeout (the connection is dropped at the deadline).
// Blocking: up to the deadline. Thread: any; no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::e2e {

struct http_reply {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    bool chunked = false;
};

result<http_reply> http_fetch(std::uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body = {}, const std::map<std::string, std::string>& headers = {},
                              std::chrono::milliseconds deadline = std::chrono::seconds(30));

}  // namespace megatts::e2e

// error_response: an HTTP error in the shape OpenAI clients parse (PROTOCOL.md §7.3):
//   {"error": {"message": ..., "type": "invalid_request_error" | "server_error", "param": ..., "code": ...}}
//
// Contract: the response answers `request` (same HTTP version and keep-alive), has
// Content-Type application/json and Cache-Control no-store; `type` is server_error for 5xx
// statuses, invalid_request_error otherwise; `param` is null when empty. A 503 (server_busy,
// not_ready) carries Retry-After, so that clients and balancers back off and retry. Pure; any
// thread.
#pragma once

#include <string_view>

#include "daemon/http/http_types.h"
#include "daemon/protocol/error_code.h"

namespace megatts {

http_response error_response(const http_request& request, http::status status, error_code code,
                             std::string_view message, std::string_view param = {});

// A JSON 200 (or other status) answer to `request`, no-store.
http_response json_response(const http_request& request, http::status status, std::string body);

}  // namespace megatts

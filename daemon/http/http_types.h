// http_types: the Beast HTTP types every handler of the server shares.
//
// Contract: aliases only. Requests are read whole into a string body, bounded by
// limits.max_message_bytes (the parser's body_limit) before any handler sees them.
#pragma once

#include <boost/beast/http.hpp>

namespace megatts {

namespace http = boost::beast::http;

using http_request = http::request<http::string_body>;
using http_response = http::response<http::string_body>;

}  // namespace megatts

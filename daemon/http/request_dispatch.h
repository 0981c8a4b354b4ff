// request_dispatch: what one parsed HTTP request becomes, decided without a socket: a response
// to send (http_routes, or the refusal of an upgrade), a hand-over to a websocket_session
// (upgrade to /v1/tts), or a hand-over to a speech_session (POST /v1/audio/speech).
//
// Contract: an upgrade is refused, before the 101, with 404 off /v1/tts, with 400 when its
// Sec-WebSocket-Key is not one (websocket_key.h) or the offered subprotocols exclude
// megatts.v1, and with 503 while the server loads or drains (a balancer then retries
// elsewhere); the permanent refusals come before the passing one, so that a request that can
// never succeed is not retried. Counts the request in the server's metrics.
// read_failure_response answers a request Beast could not parse: 413 when it is over the
// header (8 KiB) or body (limits.max_message_bytes) limit, 400 bad_request naming what was
// malformed; nothing when the peer went away or timed out (no one to answer). Both answers
// close the connection. Thread: any; blocks only where route_request does (static file
// metadata).
#pragma once

#include <optional>
#include <variant>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message_generator.hpp>

#include "daemon/http/http_types.h"
#include "daemon/server/server_context.h"

namespace megatts {

struct websocket_handover {
    bool subprotocol_negotiated = false;  // the response echoes megatts.v1
};

struct speech_handover {};

using request_action = std::variant<http::message_generator, websocket_handover, speech_handover>;

request_action dispatch_request(const http_request& request, server_context& server);

std::optional<http_response> read_failure_response(boost::beast::error_code ec, int max_message_bytes);

}  // namespace megatts

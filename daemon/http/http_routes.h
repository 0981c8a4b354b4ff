// http_routes: the answers to every plain HTTP request except POST /v1/audio/speech (which
// streams, see speech_session) and WebSocket upgrades: /healthz, /readyz, /metrics,
// /v1/voices, the page's static files, and the errors for everything else (PROTOCOL.md §7.4, §8).
//
// Contract: route_request answers synchronously from the server's state; it counts the request
// in the server's metrics. Paths are matched without their query string. Wrong methods get 405
// with Allow; /v1/tts without an upgrade gets 426 (Upgrade: websocket). Thread: any; blocks only
// on file metadata for static files.
#pragma once

#include <string_view>

#include <boost/beast/http/message_generator.hpp>

#include "daemon/http/http_types.h"
#include "daemon/server/server_context.h"

namespace megatts {

inline constexpr std::string_view tts_path = "/v1/tts";
inline constexpr std::string_view speech_path = "/v1/audio/speech";

// The path of a request target, without query or fragment.
std::string_view target_path(std::string_view target);

http::message_generator route_request(const http_request& request, server_context& server);

}  // namespace megatts

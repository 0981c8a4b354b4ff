#include "daemon/http/request_dispatch.h"

#include <string>

#include <boost/beast/websocket/rfc6455.hpp>

#include "daemon/http/error_response.h"
#include "daemon/http/http_routes.h"
#include "daemon/http/websocket_key.h"
#include "daemon/protocol/subprotocol.h"

namespace megatts {
namespace {

// Every Sec-WebSocket-Protocol header of the request, joined with commas.
std::string offered_subprotocols(const http_request& request) {
    std::string offered;
    const auto [first, last] = request.equal_range(http::field::sec_websocket_protocol);
    for (auto field = first; field != last; ++field) {
        if (!offered.empty()) offered += ',';
        offered += field->value();
    }
    return offered;
}

request_action dispatch_upgrade(const http_request& request, server_context& server) {
    server.metrics().request(http_route::websocket);
    if (target_path(request.target()) != tts_path)
        return error_response(request, http::status::not_found, error_code::not_found,
                              "WebSocket is served at " + std::string(tts_path));
    if (!valid_websocket_key(request[http::field::sec_websocket_key]))
        return error_response(request, http::status::bad_request, error_code::bad_request,
                              "Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 4.2.1)");
    const auto offer = negotiate_subprotocol(offered_subprotocols(request));
    if (offer == subprotocol_offer::refused)
        return error_response(request, http::status::bad_request, error_code::protocol_mismatch,
                              "this server speaks the subprotocol megatts.v1 only");
    if (!server.service_if_accepting())
        return error_response(request, http::status::service_unavailable, error_code::not_ready,
                              "the server is " + std::string(server_phase_name(server.phase())));
    return websocket_handover{.subprotocol_negotiated = offer == subprotocol_offer::accepted};
}

// Beast's parse errors that mean the bytes were not an HTTP/1.1 request (as opposed to a
// connection that ended or timed out, or a limit).
bool malformed(boost::beast::error_code ec) {
    using e = http::error;
    for (const e code : {e::bad_line_ending, e::bad_method, e::bad_target, e::bad_version, e::bad_field, e::bad_value,
                         e::bad_content_length, e::bad_transfer_encoding, e::bad_chunk, e::bad_chunk_extension,
                         e::bad_obs_fold, e::multiple_content_length, e::unexpected_body})
        if (ec == code) return true;
    return false;
}

}  // namespace

std::optional<http_response> read_failure_response(boost::beast::error_code ec, int max_message_bytes) {
    http_request unknown;  // what the answer answers: nothing of the request is trusted
    unknown.keep_alive(false);
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
        return error_response(unknown, http::status::payload_too_large, error_code::payload_too_large,
                              "the request line and headers are larger than Beast's limit of 8 KiB");
    if (ec == http::error::body_limit)
        return error_response(unknown, http::status::payload_too_large, error_code::payload_too_large,
                              "the body is larger than " + std::to_string(max_message_bytes) + " bytes");
    if (malformed(ec))
        return error_response(unknown, http::status::bad_request, error_code::bad_request,
                              "malformed HTTP request: " + ec.message());
    return std::nullopt;
}

request_action dispatch_request(const http_request& request, server_context& server) {
    if (boost::beast::websocket::is_upgrade(request)) return dispatch_upgrade(request, server);
    if (target_path(request.target()) == speech_path && request.method() == http::verb::post) {
        server.metrics().request(http_route::speech);
        return speech_handover{};
    }
    return route_request(request, server);
}

}  // namespace megatts

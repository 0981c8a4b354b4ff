#include "daemon/http/error_response.h"

#include <nlohmann/json.hpp>

namespace megatts {
namespace {

// Seconds a refused client should wait: an engine slot or a session frees within a few
// utterances' time, and a balancer sends the retry to another server anyway.
constexpr int k_retry_after_s = 1;

}  // namespace

http_response json_response(const http_request& request, http::status status, std::string body) {
    http_response response{status, request.version()};
    response.set(http::field::content_type, "application/json");
    response.set(http::field::cache_control, "no-store");
    response.keep_alive(request.keep_alive());
    response.body() = std::move(body);
    response.prepare_payload();
    return response;
}

http_response error_response(const http_request& request, http::status status, error_code code,
                             std::string_view message, std::string_view param) {
    const bool server_side = static_cast<unsigned>(status) >= 500;
    nlohmann::ordered_json body = {
        {"error",
         {{"message", message},
          {"type", server_side ? "server_error" : "invalid_request_error"},
          {"param", param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param)},
          {"code", error_code_name(code)}}}};
    auto response = json_response(request, status,
                                  body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    if (status == http::status::service_unavailable) response.set(http::field::retry_after, std::to_string(k_retry_after_s));
    return response;
}

}  // namespace megatts

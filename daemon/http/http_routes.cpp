#include "daemon/http/http_routes.h"

#include <nlohmann/json.hpp>

#include "daemon/http/error_response.h"
#include "daemon/http/static_file_response.h"

namespace megatts {
namespace {

using json = nlohmann::ordered_json;

http_response method_not_allowed(const http_request& request, std::string_view allow) {
    auto response = error_response(request, http::status::method_not_allowed, error_code::method_not_allowed,
                                   "method " + std::string(request.method_string()) + " is not allowed here");
    response.set(http::field::allow, allow);
    return response;
}

// Alive unless the engine failed: then the process is on its way out and a supervisor or a
// balancer should not count on it.
http_response health(const http_request& request, const server_context& server) {
    if (server.phase() != server_phase::failed) return json_response(request, http::status::ok, R"({"status":"ok"})");
    const json body = {{"status", "failed"}, {"reason", server.failure()}};
    return json_response(request, http::status::service_unavailable, body.dump());
}

http_response readiness(const http_request& request, server_context& server) {
    const auto phase = server.phase();
    const bool ready = phase == server_phase::ready;
    json body = {{"ready", ready},
                 {"sessions", server.sessions().size()},
                 {"max_sessions", server.config().server.max_sessions}};
    if (!ready) body["reason"] = server_phase_name(phase);
    if (phase == server_phase::failed) body["failure"] = server.failure();
    return json_response(request, ready ? http::status::ok : http::status::service_unavailable, body.dump());
}

http_response metrics(const http_request& request, server_context& server) {
    http_response response{http::status::ok, request.version()};
    response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    response.set(http::field::cache_control, "no-store");
    response.keep_alive(request.keep_alive());
    response.body() = server.registry().render();
    response.prepare_payload();
    return response;
}

http_response voices(const http_request& request, server_context& server) {
    const auto* service = server.service_if_loaded();
    if (!service)
        return error_response(request, http::status::service_unavailable, error_code::not_ready,
                              "the model is still loading");
    const auto& model = service->config();
    json list = json::array();
    for (const auto& [voice, id] : model.speakers) {
        const auto dialect = model.speaker_dialect.find(voice);
        list.push_back({{"id", voice},
                        {"dialect", dialect == model.speaker_dialect.end() ? json(nullptr) : json(dialect->second)}});
    }
    json languages = json::array({"auto"});
    for (const auto& [language, id] : model.languages) languages.push_back(language);
    const json body = {{"voices", std::move(list)},
                       {"languages", std::move(languages)},
                       {"default_voice", server.default_voice()},
                       {"model", server.model().name},
                       {"synthetic", server.model().synthetic}};
    return json_response(request, http::status::ok, body.dump());
}

}  // namespace

std::string_view target_path(std::string_view target) { return target.substr(0, target.find_first_of("?#")); }

http::message_generator route_request(const http_request& request, server_context& server) {
    const auto path = target_path(request.target());
    const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
    auto& metrics = server.metrics();

    if (path == speech_path) {
        metrics.request(http_route::speech);
        return method_not_allowed(request, "POST");
    }
    if (path == tts_path) {
        metrics.request(http_route::websocket);
        auto response = error_response(request, http::status::upgrade_required, error_code::bad_request,
                                       "this path speaks WebSocket (PROTOCOL.md)");
        response.set(http::field::upgrade, "websocket");
        return response;
    }
    if (!get) {
        metrics.request(http_route::other);
        return method_not_allowed(request, "GET, HEAD");
    }
    if (path == "/healthz") {
        metrics.request(http_route::health);
        return health(request, server);
    }
    if (path == "/readyz") {
        metrics.request(http_route::ready);
        return readiness(request, server);
    }
    if (path == "/metrics") {
        metrics.request(http_route::metrics);
        return megatts::metrics(request, server);
    }
    if (path == "/v1/voices") {
        metrics.request(http_route::voices);
        return voices(request, server);
    }
    metrics.request(http_route::static_file);
    return static_file_response(request, server.web_root());
}

}  // namespace megatts

// The plain HTTP answers that depend on the server's phase: /healthz and /readyz through
// loading, a failed engine and the drain that follows it; Retry-After on every 503 error.
#include "daemon/http/http_routes.h"

#include <catch2/catch.hpp>

#include <string>

#include <boost/asio/buffer.hpp>
#include <nlohmann/json.hpp>

#include "daemon/http/error_response.h"
#include "daemon/server/server_context.h"

namespace megatts {
namespace {

struct rendered {
    int status = 0;
    std::string head, body;
};

// The bytes a route's answer puts on the wire, split at the blank line.
rendered render(http::message_generator message) {
    std::string wire;
    boost::beast::error_code ec;
    while (!message.is_done()) {
        const auto buffers = message.prepare(ec);
        REQUIRE_FALSE(ec);
        for (const auto& b : buffers) wire.append(static_cast<const char*>(b.data()), b.size());
        message.consume(boost::asio::buffer_size(buffers));
    }
    rendered r;
    const auto split = wire.find("\r\n\r\n");
    REQUIRE(split != std::string::npos);
    r.head = wire.substr(0, split);
    r.body = wire.substr(split + 4);
    r.status = std::stoi(r.head.substr(9, 3));
    return r;
}

rendered get(server_context& server, const std::string& path) {
    http_request request{http::verb::get, path, 11};
    return render(route_request(request, server));
}

struct context_fixture {
    metrics_registry registry;
    server_config config;
    server_context server{config, MEGATTS_CONFIG_DIR, {"tiny", true}, registry, server_metrics::create(registry).value()};
};

TEST_CASE("health and readiness follow the phase; a failed engine makes both 503", "[http]") {
    context_fixture f;
    auto health = get(f.server, "/healthz");
    CHECK(health.status == 200);
    auto ready = get(f.server, "/readyz");
    CHECK(ready.status == 503);
    CHECK(nlohmann::json::parse(ready.body)["reason"] == "loading");

    f.server.set_failed("CUDA error: an illegal memory access was encountered");
    health = get(f.server, "/healthz");
    CHECK(health.status == 503);
    auto body = nlohmann::json::parse(health.body);
    CHECK(body["status"] == "failed");
    CHECK(body["reason"] == "CUDA error: an illegal memory access was encountered");
    ready = get(f.server, "/readyz");
    CHECK(ready.status == 503);
    body = nlohmann::json::parse(ready.body);
    CHECK(body["ready"] == false);
    CHECK(body["reason"] == "failed");
    CHECK(body["failure"] == "CUDA error: an illegal memory access was encountered");
    CHECK(f.server.service_if_accepting() == nullptr);

    // The drain that follows a failure keeps it failed.
    f.server.set_draining();
    CHECK(f.server.phase() == server_phase::failed);
    CHECK(get(f.server, "/healthz").status == 503);
}

TEST_CASE("a draining server is alive but not ready", "[http]") {
    context_fixture f;
    f.server.set_draining();
    CHECK(f.server.phase() == server_phase::draining);
    CHECK(get(f.server, "/healthz").status == 200);
    CHECK(nlohmann::json::parse(get(f.server, "/readyz").body)["reason"] == "draining");
}

TEST_CASE("every 503 error carries Retry-After; other errors do not", "[http]") {
    http_request request{http::verb::post, "/v1/audio/speech", 11};
    const auto busy = error_response(request, http::status::service_unavailable, error_code::server_busy, "full");
    CHECK(busy[http::field::retry_after] == "1");
    const auto bad = error_response(request, http::status::bad_request, error_code::bad_request, "no");
    CHECK(bad.find(http::field::retry_after) == bad.end());
}

}  // namespace
}  // namespace megatts

#include "daemon/engine_identity.h"

#include <chrono>
#include <fstream>

#include "daemon/client/http_client.h"
#include "kernels/cuda/cuda_probe.h"

namespace megatts {
namespace {

constexpr const char* k_info_metric = "megatts_engine_info";

}  // namespace

std::string host_cpu() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("model name")) continue;
        const auto colon = line.find(':');
        if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
    return "unknown";
}

result<engine_identity> identify_engine(const std::string& backend) {
    if (backend == "cpu")
        return engine_identity{.backend = "cpu", .device = host_cpu(), .driver = "none", .runtime = "none"};
    const auto report = probe_cuda();
    auto device = usable_device(report, 0);
    if (!device) return device.err();
    return engine_identity{.backend = backend,
                           .device = device->name,
                           .driver = format_cuda_version(report.driver_version),
                           .runtime = format_cuda_version(report.runtime_version)};
}

result<void> publish_engine_identity(metrics_registry& registry, const engine_identity& identity) {
    auto info = registry.add_gauge(
        k_info_metric, "The engine's backend, the device it runs on, the CUDA driver and runtime; always 1.",
        {{"backend", identity.backend},
         {"device", identity.device},
         {"driver", identity.driver},
         {"runtime", identity.runtime}});
    if (!info) return info.err();
    (*info)->set(1);
    return {};
}

std::optional<engine_identity> engine_identity_in(const std::vector<bench::metric_sample>& samples) {
    for (const auto& s : samples) {
        if (s.name != k_info_metric) continue;
        auto backend = bench::label_value(s.labels, "backend");
        auto device = bench::label_value(s.labels, "device");
        auto driver = bench::label_value(s.labels, "driver");
        auto runtime = bench::label_value(s.labels, "runtime");
        if (backend && device && driver && runtime) return engine_identity{*backend, *device, *driver, *runtime};
    }
    return std::nullopt;
}

engine_identity unpublished_engine() {
    return {"unknown", "unknown (the server does not publish megatts_engine_info)", "unknown", "unknown"};
}

std::optional<engine_identity> fetch_engine_identity(const std::string& address, std::uint16_t port) {
    auto reply = client::http_fetch(
        {.host = address, .port = port, .target = "/metrics", .deadline = std::chrono::seconds(10)});
    if (!reply || reply->status != 200) return std::nullopt;
    return engine_identity_in(bench::parse_metrics_text(reply->body));
}

}  // namespace megatts

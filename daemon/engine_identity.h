// engine_identity: what does a server's model work: the backend, the device (the GPU's name on
// the cuda backend, the CPU's model on the cpu one), the CUDA driver and runtime ("none" on
// the CPU). The server publishes it on /metrics as
// megatts_engine_info{backend,device,driver,runtime} 1 (the Prometheus *_info convention: one
// series, value 1, the facts in its labels), and the benchmarks read it back from the server
// they measured, so that a record names the device that did the work, not the machine that ran
// the benchmark.
//
// Contract: identify_engine() probes this machine for `backend` ("cpu" or "cuda"): the cuda
// backend on a machine without a usable GPU is an error (mismatch, with the probe's reason),
// never a CPU identity. publish_engine_identity() registers the series once. The CPU's model
// comes from /proc/cpuinfo ("unknown" when it cannot be read). engine_identity_in() finds the
// series among a /metrics scrape's samples; fetch_engine_identity() scrapes a server at an IP
// address for it (both nullopt when the server does not publish it or does not answer within
// 10 s); a record then names unpublished_engine(), "unknown" throughout. Thread: any;
// identify_engine() blocks for the CUDA probe, fetch_engine_identity() for the request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/bench/metrics_text.h"
#include "kernels/common/result.h"
#include "pipeline/telemetry/metrics_registry.h"

namespace megatts {

struct engine_identity {
    std::string backend;
    std::string device;
    std::string driver;
    std::string runtime;
};

std::string host_cpu();

result<engine_identity> identify_engine(const std::string& backend);

result<void> publish_engine_identity(metrics_registry& registry, const engine_identity& identity);

std::optional<engine_identity> engine_identity_in(const std::vector<bench::metric_sample>& samples);

std::optional<engine_identity> fetch_engine_identity(const std::string& address, std::uint16_t port);

engine_identity unpublished_engine();

}  // namespace megatts

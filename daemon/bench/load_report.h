// load_report: how `megatts bench load` shows its figures: a table on stdout, one row per rate
// (with its errors by code and the server's engine figures under it), and the machine-readable
// record (--json) with the run's settings, the date, the commit this binary was built from,
// the device, the server that answered, every rate's summary and, when asked, every request's
// outcome.
//
// Contract: pure formatting; the device is this machine's CPU model (from /proc/cpuinfo; the
// generator runs on loopback beside the server it measures, so it is also the server's host),
// "unknown" when it cannot be read. Thread: any.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/bench/rate_summary.h"
#include "daemon/bench/request_outcome.h"

namespace megatts::bench {

void print_rate_header();
void print_rate(const rate_summary& s);

nlohmann::json rate_json(const rate_summary& s);
nlohmann::json outcomes_json(const std::vector<request_outcome>& outcomes);

std::string host_cpu();

}  // namespace megatts::bench

// load_report: how `megatts bench load` shows its figures: a table on stdout, one row per rate
// (with its errors by code and the server's engine figures under it), and the machine-readable
// record (--json) with the run's settings, the date, the commit this binary was built from,
// the server that answered and the device it runs on (command_bench_load.cpp), every rate's
// summary and, when asked, every request's outcome.
//
// Contract: pure formatting. Thread: any.
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

}  // namespace megatts::bench

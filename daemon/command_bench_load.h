// command_bench_load: `megatts bench load`: the open-loop load generator (issue 5) against a
// running server: Poisson arrivals at each given rate for --duration seconds, English and
// Chinese sentences of 3-15 s of speech, one WebSocket client per request that plays its audio
// in real time (underruns counted behind a jitter buffer), all on one io_context. Prints per
// rate: requests, TTFA p50/p95/p99 (client and the server's first_sent), underruns, audio
// seconds per second, errors by code, and the server's engine figures from /metrics; --json
// writes the record (settings, date, commit, device, server, rates, optionally every request).
//
// Exit: 0 when every rate ran (requests that failed are figures, not a failure of the
// command); 1 when the server cannot be reached before the first rate; 2 for bad options.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_bench_load_command(CLI::App& bench, int& exit_code);

}  // namespace megatts

// rate_run: one rate of `megatts bench load`, open loop: the plan's requests are launched at
// their arrival times whether or not earlier ones have finished (a closed loop would hide
// queueing), all on one io_context and one thread (no thread per client), while the server's
// /metrics is polled for its engine gauges. Returns when every request has ended.
//
// Contract: run_rate plans the arrivals (arrival_plan.h, from settings.seed), runs them and
// returns every outcome in plan order, how many requests were in flight (peak and
// time-weighted mean), the polled gauges (series named *batch*,
// megatts_engine_active_utterances and megatts_stalled_sessions, by series), and /metrics
// before and after the run (empty when the server does not answer it: the report then lacks
// server figures, the run goes on).
// With frames_at_pace each request asks for at most its sentence's spoken length in frames
// (start.max_frames), so that a checkpoint of random weights, whose EOS comes at random,
// speaks for as long as a real model would.
// Errors: the plan's (invalid rate or duration, no sentences). Blocking: for the run, about
// duration_s plus the longest request.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/bench/load_request.h"
#include "daemon/bench/metrics_text.h"
#include "daemon/bench/request_outcome.h"
#include "daemon/bench/sentence_pool.h"
#include "kernels/common/result.h"

namespace megatts::bench {

struct rate_settings {
    double rate = 1;
    double duration_s = 30;
    std::uint64_t seed = 1;
    std::uint64_t sampling_seeds = 0;
    std::vector<pool_sentence> sentences;
    bool frames_at_pace = false;  // each request's max_frames: its sentence's spoken length
    request_spec request;  // the template: connection, voice, format, playout, timeout
    std::chrono::milliseconds metrics_interval{500};
};

struct rate_result {
    std::vector<request_outcome> outcomes;  // in plan order
    double elapsed_s = 0;                   // from the rate's start to the end of its last request
    int peak_in_flight = 0;
    double mean_in_flight = 0;              // over elapsed_s
    std::map<std::string, std::vector<double>> polled;  // series (name{labels}) -> values
    std::vector<metric_sample> metrics_before;
    std::vector<metric_sample> metrics_after;
};

result<rate_result> run_rate(const rate_settings& settings);

}  // namespace megatts::bench

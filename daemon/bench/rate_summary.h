// rate_summary: the figures of one rate of `megatts bench load`, from its outcomes and the
// server's metrics: requests, completions, errors by code, TTFA percentiles (client: start
// sent to first audio message; server: first_sent - received; playback start), underruns
// (and, over the requests that had any, how long after playback began the first came),
// audio seconds delivered per wall second (from the rate's start to its last done), requests
// in flight (a request holds its connection until its audio is played out), and the server's engine
// figures when /metrics exposes them (polled gauges: mean and peak; the engine's histograms,
// megatts_engine_*: observations, sum and mean over the rate, from /metrics before and after),
// and the engine's headroom: the audio its steps made per second of their time
// (megatts_audio_seconds_total over megatts_engine_frame_seconds' sum, over the rate) against
// the audio the rate asks for a second (rate x the completed requests' mean audio). Below 1
// the sessions' leads drain and, given time, they underrun; the figure is the engine's at the
// batches this rate gave it (larger batches cost less a session).
//
// Contract: summarize is pure; percentiles are nearest-rank (percentile.h) over the requests
// that have the figure; a percentile of no requests is absent. Any thread.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "daemon/bench/rate_run.h"

namespace megatts::bench {

struct latency_summary {
    std::size_t count = 0;
    std::optional<double> p50, p95, p99, max;
};

struct gauge_summary {
    double mean = 0;
    double peak = 0;
    std::size_t samples = 0;
};

struct histogram_summary {
    double observations = 0;
    double mean = 0;
    double sum = 0;
};

struct rate_summary {
    double rate = 0;
    double duration_s = 0;
    std::size_t requests = 0;
    std::size_t completed = 0;
    std::map<std::string, std::size_t> errors;  // by code (request_outcome.h)
    latency_summary ttfa;          // client
    latency_summary server_ttfa;   // first_sent
    latency_summary first_played;  // simulated playback start
    latency_summary connect;
    latency_summary first_underrun;  // playback began -> first ran dry, over requests that underran
    int underruns = 0;
    std::size_t requests_with_underruns = 0;
    double audio_s = 0;
    double audio_s_per_s = 0;
    double elapsed_s = 0;  // to the end of the last request
    int peak_in_flight = 0;
    double mean_in_flight = 0;
    std::map<std::string, gauge_summary> server_gauges;
    std::map<std::string, histogram_summary> server_histograms;  // the engine's (megatts_engine_*)
    // Audio seconds a second: what the engine made per second of its steps, what the rate asks.
    std::optional<double> engine_audio_s_per_s;
    std::optional<double> asked_audio_s_per_s;
};

rate_summary summarize(const rate_settings& settings, const rate_result& result);

}  // namespace megatts::bench

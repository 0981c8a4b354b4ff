// load_request: one request of `megatts bench load`, as a client that plays the audio in real
// time: connect, wait for `ready`, send one whole-text `start` (text and end together), read
// the utterance to its `done` (checked by daemon/client's utterance_assembler), keep the
// connection until the audio has been played out (as a player does; a close from the server
// meanwhile is no failure), close. Its playback is simulated from the audio messages' arrival
// times (playout_clock), and the
// outcome records the client's TTFA (start sent -> first audio message), the server's
// (metrics.server_ttfa_ms, first_sent - received), underruns, and how it ended.
//
// Contract: launch() starts the request on `executor` and calls `done` exactly once, on the
// executor, with the outcome, when the request ended in any way: completed, refused (HTTP
// status at the upgrade, server_busy, a refused start), closed by the server, broken, or past
// `timeout` before its `done` (the socket is then dropped). Never blocks; no exceptions. Lifetime: the request
// keeps itself alive until `done` ran. Thread: the executor's (one thread).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "daemon/bench/arrival_plan.h"
#include "daemon/bench/playout_clock.h"
#include "daemon/bench/request_outcome.h"
#include "daemon/client/tts_connection.h"
#include "daemon/protocol/audio_format_name.h"

namespace megatts::bench {

struct request_spec {
    std::size_t index = 0;
    planned_request plan;
    std::string text;
    std::string language;
    std::string voice;  // empty: the server's default
    audio_format format = audio_format::opus;
    bool greedy = false;
    int max_frames = 0;  // start.max_frames: 0, the server's limit
    client::client_options connection;
    playout_clock::settings playout;
    std::chrono::milliseconds timeout{120'000};
    std::chrono::steady_clock::time_point run_start{};
};

void launch_request(boost::asio::any_io_executor executor, request_spec spec,
                    std::function<void(request_outcome)> done);

}  // namespace megatts::bench

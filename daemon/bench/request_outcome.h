// request_outcome: what one request of `megatts bench load` measured, and how it ended.
//
// Contract: a plain value. `error` is empty for a request that completed (a `done` with reason
// end or max_frames, every promise of the protocol kept); otherwise it names how it failed:
// an error event's code (server_busy, slow_consumer, ...), close_NNNN (the server closed with
// that code and no error event), http_NNN (the upgrade was refused with that status), connect,
// io (the connection broke without a close frame), protocol (a broken promise), or timeout.
// Times are milliseconds; *_at_s are seconds after the rate's start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace megatts::bench {

struct request_outcome {
    std::size_t index = 0;        // in the rate's plan
    double planned_at_s = 0;
    double started_at_s = 0;      // connect began
    double done_at_s = 0;         // the done event arrived (0: none)
    double finished_at_s = 0;     // the connection ended, after the audio was played out
    std::size_t sentence = 0;     // index into the run's sentences
    std::string language;
    std::uint64_t seed = 0;

    bool started = false;         // the server opened the utterance (its `started` came)
    std::string error;            // empty: completed
    std::string error_message;
    std::string done_reason;      // of the done event, when one came

    std::optional<double> connect_ms;       // connect began -> ready arrived
    std::optional<double> ttfa_ms;          // start sent -> first audio message arrived
    std::optional<double> server_ttfa_ms;   // the metrics event's first_sent - received
    std::optional<double> first_played_ms;  // start sent -> simulated playback began
    double audio_ms = 0;                    // done.audio_ms
    std::int64_t pcm16_samples = 0;         // received samples (pcm16 format only)
    std::int64_t audio_messages = 0;
    int frames = 0;
    int underruns = 0;
    double stalled_ms = 0;                  // simulated playback waiting after underruns
    std::optional<double> first_underrun_ms;  // simulated playback began -> it first ran dry
};

}  // namespace megatts::bench

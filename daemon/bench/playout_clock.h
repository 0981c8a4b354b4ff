// playout_clock: a client's real-time playback of one utterance, simulated from the arrival
// times of its audio messages, to count the underruns a listener would hear.
//
// Model (the page's player, web/player_worklet.js): playback starts once `start_buffer` of
// audio is buffered (the jitter buffer) or the utterance has ended, then consumes audio in real
// time. When the buffer runs dry before the end, that is an underrun: playback stops, the
// target grows by `step` (up to `max`), and restarts when the target is buffered again. The
// time spent rebuffering is `stalled`. Audio after the end arrives never underruns.
//
// Contract: arrive() and end() take non-decreasing times; arrive() with the message's audio
// duration (0 for the empty `last` message is fine), end() once when the utterance's last
// message arrived. first_played() is when playback first started; first_dry() when it first
// ran dry (the first underrun); played_out(), after end(), when the last sample will have been
// played. Pure; one owner.
#pragma once

#include <chrono>
#include <optional>

namespace megatts::bench {

class playout_clock {
public:
    using time_point = std::chrono::steady_clock::time_point;
    using duration = std::chrono::microseconds;

    struct settings {
        duration start_buffer{60'000};
        duration step{20'000};
        duration max{200'000};
    };

    explicit playout_clock(settings s) : settings_(s), target_(s.start_buffer) {}

    void arrive(time_point at, duration audio);
    void end(time_point at);

    int underruns() const { return underruns_; }
    duration stalled() const { return stalled_; }
    std::optional<time_point> first_played() const { return first_played_; }
    std::optional<time_point> first_dry() const { return first_dry_; }
    std::optional<time_point> played_out() const;

private:
    void advance(time_point now);
    void play(time_point at);

    settings settings_;
    duration target_;
    duration buffered_{0};  // audio in the buffer at `now_`
    time_point now_{};
    bool playing_ = false;
    bool ended_ = false;
    std::optional<time_point> dry_since_;  // the last underrun, while rebuffering
    std::optional<time_point> first_played_;
    std::optional<time_point> first_dry_;
    int underruns_ = 0;
    duration stalled_{0};
};

}  // namespace megatts::bench

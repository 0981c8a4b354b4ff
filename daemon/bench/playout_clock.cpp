#include "daemon/bench/playout_clock.h"

#include <algorithm>

namespace megatts::bench {

void playout_clock::advance(time_point now) {
    if (playing_) {
        const auto elapsed = std::chrono::duration_cast<duration>(now - now_);
        if (elapsed <= buffered_) {
            buffered_ -= elapsed;
        } else {
            // Ran dry at now_ + buffered_: an underrun unless everything has been played.
            const auto dry_at = now_ + buffered_;
            buffered_ = duration{0};
            playing_ = false;
            if (!ended_) {
                ++underruns_;
                dry_since_ = dry_at;
                if (!first_dry_) first_dry_ = dry_at;
                target_ = std::min(target_ + settings_.step, settings_.max);
            }
        }
    }
    now_ = now;
}

void playout_clock::play(time_point at) {
    playing_ = true;
    if (!first_played_) first_played_ = at;
    if (dry_since_) {
        stalled_ += std::chrono::duration_cast<duration>(at - *dry_since_);
        dry_since_.reset();
    }
}

void playout_clock::arrive(time_point at, duration audio) {
    advance(at);
    buffered_ += audio;
    if (!playing_ && buffered_ > duration{0} && buffered_ >= target_) play(at);
}

void playout_clock::end(time_point at) {
    advance(at);
    ended_ = true;
    if (!playing_ && buffered_ > duration{0}) play(at);
}

std::optional<playout_clock::time_point> playout_clock::played_out() const {
    if (!ended_) return std::nullopt;
    return now_ + buffered_;  // playing since end() unless nothing was left
}

}  // namespace megatts::bench

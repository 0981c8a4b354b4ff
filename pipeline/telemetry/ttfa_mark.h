// ttfa_mark: the fixed names of the time-to-first-audio marks of an utterance (DESIGN.md §1),
// in pipeline order. Server TTFA is first_sent - received; each mark minus the one before it is
// one stage of the breakdown.
//
// Contract: compile-time data, pure functions, any thread.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace megatts {

enum class ttfa_mark {
    received,      // the utterance's first text reached the session (tts_session::text())
    tokenized,     // the token ids the engine needs to admit the utterance exist
    admitted,      // the engine took the utterance into its active set
    prefill_done,  // the prompt ran through the talker
    first_code0,   // codebook 0 of the first frame was sampled
    first_frame,   // the first frame's 16 codes exist
    first_pcm,     // the vocoder turned them into samples
    first_packet,  // the first Opus packet (or PCM16 block) was encoded
    first_sent,    // the transport reported the write of that packet complete
};

inline constexpr std::size_t k_ttfa_mark_count = 9;

inline constexpr std::array<ttfa_mark, k_ttfa_mark_count> k_ttfa_marks = {
    ttfa_mark::received,    ttfa_mark::tokenized, ttfa_mark::admitted,
    ttfa_mark::prefill_done, ttfa_mark::first_code0, ttfa_mark::first_frame,
    ttfa_mark::first_pcm,   ttfa_mark::first_packet, ttfa_mark::first_sent,
};

std::string_view ttfa_mark_name(ttfa_mark mark);

}  // namespace megatts

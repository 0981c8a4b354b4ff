// sentence_pool: the texts `megatts bench load` speaks: English and Chinese sentences of about
// 3 to 15 seconds of speech each (a real model's pace: ~2.5 English words or ~4 Chinese
// characters per second), everyday requests to long descriptive ones, so that a run mixes
// short and long utterances as a voice assistant's traffic does.
//
// Contract: the pool is fixed (written for this benchmark; changing it changes every recorded
// figure, so bench/RESULTS.md names the commit). sentences_in(languages) returns the pool's
// sentences of the given languages in pool order; an unknown language is an invalid_input
// error naming it. spoken_seconds(s) is the sentence's length at that pace (words, or
// CJK ideographs, over the pace; punctuation does not count). Pure; any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::bench {

struct pool_sentence {
    std::string_view language;  // as the protocol's start.language: "english" or "chinese"
    std::string_view text;
};

std::span<const pool_sentence> sentence_pool();

result<std::vector<pool_sentence>> sentences_in(std::span<const std::string> languages);

double spoken_seconds(const pool_sentence& s);

}  // namespace megatts::bench

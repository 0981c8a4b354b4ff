// arrival_plan: when the requests of one open-loop load rate arrive and what each one asks
// for: Poisson arrivals (exponential gaps of mean 1/rate), a sentence drawn uniformly from the
// pool, and a sampling seed.
//
// Contract: plan_arrivals is deterministic in its arguments (its own generator and
// transforms, not the standard library's distributions, whose output may differ between
// library versions), so a seed reproduces a run's traffic anywhere. Arrival times are
// ascending, in [0, duration_s). sampling_seeds = 0 gives every request its own seed in
// 0..2^53-1 (the protocol's range); N > 0 draws seeds from 1..N, so a run reuses few (text,
// seed) pairs and its audio can be checked against `megatts say` cheaply.
// Errors: invalid_input for a rate or duration that is not positive and finite, or an empty
// pool. Pure; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::bench {

struct planned_request {
    double at_s = 0;             // after the rate's start
    std::size_t sentence = 0;    // index into the pool given
    std::uint64_t seed = 0;      // sampling seed
};

result<std::vector<planned_request>> plan_arrivals(double rate, double duration_s, std::uint64_t seed,
                                                   std::size_t pool_size, std::uint64_t sampling_seeds);

}  // namespace megatts::bench

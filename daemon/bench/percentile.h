// percentile: nearest-rank percentiles of a sample, as latency reports quote them.
//
// Contract: percentile(values, p) for p in [0, 100] is the smallest value v such that at
// least p% of the values are <= v (p = 0: the minimum); nothing for an empty sample. Pure.
#pragma once

#include <optional>
#include <vector>

namespace megatts::bench {

std::optional<double> percentile(std::vector<double> values, double p);

}  // namespace megatts::bench

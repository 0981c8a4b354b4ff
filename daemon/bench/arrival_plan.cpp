#include "daemon/bench/arrival_plan.h"

#include <cmath>
#include <random>

namespace megatts::bench {

result<std::vector<planned_request>> plan_arrivals(double rate, double duration_s, std::uint64_t seed,
                                                   std::size_t pool_size, std::uint64_t sampling_seeds) {
    if (!(rate > 0) || !std::isfinite(rate)) return make_error(error_kind::invalid_input, "the rate must be > 0");
    if (!(duration_s > 0) || !std::isfinite(duration_s))
        return make_error(error_kind::invalid_input, "the duration must be > 0");
    if (pool_size == 0) return make_error(error_kind::invalid_input, "no sentences to speak");
    // mt19937_64's output is fixed by the standard; the transforms below are ours.
    std::mt19937_64 rng(seed);
    const auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
    constexpr std::uint64_t max_protocol_seed = (std::uint64_t{1} << 53) - 1;
    std::vector<planned_request> plan;
    for (double t = -std::log1p(-uniform()) / rate; t < duration_s; t += -std::log1p(-uniform()) / rate) {
        planned_request r{.at_s = t};
        r.sentence = static_cast<std::size_t>(rng() % pool_size);
        r.seed = sampling_seeds == 0 ? rng() & max_protocol_seed : 1 + rng() % sampling_seeds;
        plan.push_back(r);
    }
    return plan;
}

}  // namespace megatts::bench

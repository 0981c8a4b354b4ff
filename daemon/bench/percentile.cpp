#include "daemon/bench/percentile.h"

#include <algorithm>
#include <cmath>

namespace megatts::bench {

std::optional<double> percentile(std::vector<double> values, double p) {
    if (values.empty()) return std::nullopt;
    const auto n = values.size();
    const auto rank = static_cast<std::size_t>(std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(n)));
    const auto index = rank == 0 ? 0 : rank - 1;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
    return values[index];
}

}  // namespace megatts::bench

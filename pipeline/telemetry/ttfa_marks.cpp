#include "pipeline/telemetry/ttfa_marks.h"

#include <algorithm>

namespace megatts {

void ttfa_marks::record(ttfa_mark mark, clock::time_point at) {
    auto& slot = at_[static_cast<std::size_t>(mark)];
    if (!slot) slot = at;
}

std::optional<ttfa_marks::clock::time_point> ttfa_marks::at(ttfa_mark mark) const {
    return at_[static_cast<std::size_t>(mark)];
}

bool ttfa_marks::complete() const {
    return std::all_of(at_.begin(), at_.end(), [](const auto& t) { return t.has_value(); });
}

std::optional<double> ttfa_marks::ms_after_received(ttfa_mark mark) const {
    const auto start = at(ttfa_mark::received);
    const auto end = at(mark);
    if (!start || !end) return std::nullopt;
    return std::chrono::duration<double, std::milli>(*end - *start).count();
}

}  // namespace megatts

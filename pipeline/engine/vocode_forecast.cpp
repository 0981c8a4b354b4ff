#include "pipeline/engine/vocode_forecast.h"

#include <algorithm>

namespace megatts {

void vocode_forecast::record(int items, clock::duration device) {
    if (items < 1 || device <= clock::duration::zero()) return;
    items_ = items;
    device_ = device;
}

std::optional<vocode_forecast::clock::time_point> vocode_forecast::due(clock::time_point started, int items) const {
    if (items_ == 0 || items < 1) return std::nullopt;
    return started + device_ * std::min(items, items_) / items_;
}

}  // namespace megatts

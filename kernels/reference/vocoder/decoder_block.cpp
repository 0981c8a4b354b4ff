#include "kernels/reference/vocoder/decoder_block.h"

#include <cstddef>

#include "kernels/reference/vocoder/snake_beta.h"

namespace megatts::ref {

decoder_block::decoder_block(const decoder_block_weights& w) : w_(&w), up_(w.up.phases, 1) {
    for (std::size_t u = 0; u < w.units.size(); ++u) units_.emplace_back(w.units[u], residual_dilations[u]);
}

std::span<const float> decoder_block::run(std::span<const float> x) {
    act_.assign(x.begin(), x.end());
    snake_beta(w_->snake, act_);
    // The phases of input row t are output rows t*r .. t*r + r - 1.
    std::span<const float> h = up_.run(act_);
    for (auto& unit : units_) h = unit.run(h);
    return h;
}

}  // namespace megatts::ref

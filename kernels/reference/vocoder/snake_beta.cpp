#include "kernels/reference/vocoder/snake_beta.h"

#include <cmath>
#include <cstddef>

namespace megatts::ref {

void snake_beta(const snake_weights& s, std::span<float> x) {
    const std::size_t channels = s.alpha.size();
    for (std::size_t row = 0; row < x.size(); row += channels) {
        float* v = x.data() + row;
        for (std::size_t c = 0; c < channels; ++c) {
            const float t = std::sin(v[c] * s.alpha[c]);
            v[c] += s.inv_beta[c] * (t * t);
        }
    }
}

}  // namespace megatts::ref

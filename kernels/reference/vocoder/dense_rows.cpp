#include "kernels/reference/vocoder/dense_rows.h"

#include <algorithm>
#include <cstddef>

namespace megatts::ref {
namespace {

// Rows are processed a tile at a time so that each weight row (one tap and input
// channel, all output channels) is read once per tile. The inner loop is an axpy
// over output channels: the compiler vectorises it without reassociating any sum.
constexpr int row_tile = 4;

}  // namespace

void dense_rows(const dense_weights& w, const float* x, int dilation, int rows, float* y) {
    const auto in = static_cast<std::size_t>(w.in), out = static_cast<std::size_t>(w.out);
    for (int r0 = 0; r0 < rows; r0 += row_tile) {
        const int tile = std::min(row_tile, rows - r0);
        for (int i = 0; i < tile; ++i) {
            float* yr = y + static_cast<std::size_t>(r0 + i) * out;
            if (w.bias.empty())
                std::fill(yr, yr + out, 0.f);
            else
                std::copy(w.bias.begin(), w.bias.end(), yr);
        }
        for (int k = 0; k < w.taps; ++k) {
            const float* xk = x + static_cast<std::size_t>(r0 + k * dilation) * in;
            for (std::size_t c = 0; c < in; ++c) {
                const float* wc = w.weight.data() + (static_cast<std::size_t>(k) * in + c) * out;
                for (int i = 0; i < tile; ++i) {
                    const float a = xk[static_cast<std::size_t>(i) * in + c];
                    float* yr = y + static_cast<std::size_t>(r0 + i) * out;
                    for (std::size_t o = 0; o < out; ++o) yr[o] += a * wc[o];
                }
            }
        }
    }
}

void dense_map(const dense_weights& w, std::span<const float> x, std::vector<float>& y) {
    const int rows = static_cast<int>(x.size() / static_cast<std::size_t>(w.in));
    y.resize(static_cast<std::size_t>(rows) * w.out);
    dense_rows(w, x.data(), 1, rows, y.data());
}

}  // namespace megatts::ref

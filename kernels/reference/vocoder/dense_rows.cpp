#include "kernels/reference/vocoder/dense_rows.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace megatts::ref {
namespace {

// Rows are processed a tile at a time so that each weight row (one tap and input
// channel, all output channels) is read once per tile. The inner loop is an axpy
// over output channels: the compiler vectorises it without reassociating any sum.
constexpr int row_tile = 4;

// The operands as published, or rounded (round_operand's bit arithmetic, which the
// inner loop vectorises as it does the f32 one).
struct f32_operands {
    float operator()(float v) const { return v; }
};

struct rounded_operands {
    std::uint32_t half, keep;
    explicit rounded_operands(int bits) : half(1u << (23 - bits)), keep(~((half << 1) - 1u)) {}
    float operator()(float v) const {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
        if ((u & 0x7f800000u) == 0x7f800000u) return v;  // infinity or NaN
        return std::bit_cast<float>((u + half) & keep);
    }
};

template <class Operand>
void rows_of(const dense_weights& w, const float* x, int dilation, int rows, float* y, Operand operand) {
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
                    const float a = operand(xk[static_cast<std::size_t>(i) * in + c]);
                    float* yr = y + static_cast<std::size_t>(r0 + i) * out;
                    for (std::size_t o = 0; o < out; ++o) yr[o] += a * operand(wc[o]);
                }
            }
        }
    }
}

}  // namespace

float round_operand(float v, int bits) { return bits >= 24 ? v : rounded_operands(bits)(v); }

void dense_rows(const dense_weights& w, const float* x, int dilation, int rows, float* y) {
    if (w.operand_bits < 24)
        rows_of(w, x, dilation, rows, y, rounded_operands(w.operand_bits));
    else
        rows_of(w, x, dilation, rows, y, f32_operands{});
}

void dense_map(const dense_weights& w, std::span<const float> x, std::vector<float>& y) {
    const int rows = static_cast<int>(x.size() / static_cast<std::size_t>(w.in));
    y.resize(static_cast<std::size_t>(rows) * w.out);
    dense_rows(w, x.data(), 1, rows, y.data());
}

}  // namespace megatts::ref

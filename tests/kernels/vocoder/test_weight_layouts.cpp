// unit: kernels/vocoder/weight_layouts.h, the two device layouts of the vocoder's weights,
// read back the way the tensor cores read them: mma.sync's B fragment (lane (g, t) of an n8
// tile holds k slots 2t, 2t + 1 in its first register and 2t + 8, 2t + 9 in its second, for
// column g; conv_gemm loads word t of the column's half-step as {hi b0, hi b1, lo b0, lo b1})
// and wgmma's unswizzled K-major core matrices (128 bytes: 8 columns of 8 k slots). Every
// slot of every column of both layouts must hold the bf16x3 plane of W at the k that
// slot_order.h gives that slot, the k from which A's fragments take the other factor. The
// TF32 layout's core matrices (8 columns of 4 k) hold W rounded as the reference's TF32
// model rounds it (round_operand to 11 bits).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/reference/vocoder/dense_rows.h"
#include "kernels/vocoder/weight_layouts.h"

using namespace megatts::voc;

namespace {

struct word4 {
    std::uint32_t x, y, z, w;
};

std::uint16_t half_of(std::uint32_t reg, int which) { return static_cast<std::uint16_t>(reg >> (16 * which)); }

std::uint32_t component(const word4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

}  // namespace

TEST_CASE("slot_k is a permutation of each 16 k") {
    std::set<int> ks;
    for (int slot = 0; slot < 16; ++slot) ks.insert(slot_k(slot));
    CHECK(ks.size() == 16);
    CHECK(*ks.begin() == 0);
    CHECK(*ks.rbegin() == 15);
}

TEST_CASE("both weight layouts put each k of W at the slot A reads it from, as hi and lo bf16") {
    const int k_steps = 3, n_pad = 128, K = 90, N = 100;  // zero past K and N, as uploaded
    std::vector<float> padded(static_cast<std::size_t>(k_steps) * 32 * n_pad, 0.f);
    std::mt19937 rng(11);
    std::normal_distribution<float> value(0.f, 0.05f);
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) padded[static_cast<std::size_t>(k) * n_pad + n] = value(rng);
    const auto split = split_layout<word4>(padded, k_steps, n_pad);
    const auto cores = core_layout<word4>(padded, k_steps, n_pad);
    REQUIRE(split.size() == static_cast<std::size_t>(k_steps) * 2 * n_pad * 4);
    REQUIRE(cores.size() == split.size());

    long checked = 0;
    for (int half = 0; half < 2 * k_steps; ++half)
        for (int n = 0; n < n_pad; ++n)
            for (int slot = 0; slot < 16; ++slot) {
                const float x = padded[static_cast<std::size_t>(16 * half + slot_k(slot)) * n_pad + n];
                const std::uint16_t hi = bf16_bits(x), lo = bf16_bits(x - bf16_value(hi));
                // The hi and lo planes together carry x to 2^-16 of itself.
                REQUIRE(std::fabs(bf16_value(hi) + bf16_value(lo) - x) <= std::fabs(x) * 0x1p-16f);

                // mma.sync: lane t = (slot % 8) / 2 of column n; register b0 for slots 0..7, b1
                // for 8..15; the lower 16 bits hold the even slot.
                const word4& f = split[(static_cast<std::size_t>(half) * n_pad + n) * 4 + (slot % 8) / 2];
                CHECK(half_of(component(f, slot / 8), slot % 2) == hi);
                CHECK(half_of(component(f, 2 + slot / 8), slot % 2) == lo);

                // wgmma: k-step half / 2, 8-column group n / 8, plane, core 2 (half % 2) + slot / 8,
                // column n % 8; element slot % 8 of the column's 16 bytes.
                for (int plane = 0; plane < 2; ++plane) {
                    const std::size_t word =
                        ((((static_cast<std::size_t>(half / 2) * (n_pad / 8) + n / 8) * 2 + plane) * 4 +
                          2 * (half % 2) + slot / 8) *
                         8) +
                        n % 8;
                    const int e = slot % 8;
                    CHECK(half_of(component(cores[word], e / 2), e % 2) == (plane == 0 ? hi : lo));
                }
                ++checked;
            }
    CHECK(checked == 2L * k_steps * n_pad * 16);
}

TEST_CASE("the TF32 layout puts each k of W, rounded as the reference's TF32 model rounds it, in its core matrix") {
    const int k_steps = 2, n_pad = 64, K = 50, N = 60;
    std::vector<float> padded(static_cast<std::size_t>(k_steps) * 32 * n_pad, 0.f);
    std::mt19937 rng(5);
    std::normal_distribution<float> value(0.f, 0.05f);
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) padded[static_cast<std::size_t>(k) * n_pad + n] = value(rng);
    // Ties, both signs: the rounding goes away from zero.
    padded[0] = std::bit_cast<float>(0x3f801000u);
    padded[1] = std::bit_cast<float>(0xbf803000u);
    const auto cores = tf32_core_layout<word4>(padded, k_steps, n_pad);
    REQUIRE(cores.size() == static_cast<std::size_t>(k_steps) * n_pad * 8);
    CHECK(tf32_bits(padded[0]) == 0x3f802000u);
    CHECK(tf32_bits(padded[1]) == 0xbf804000u);

    long checked = 0;
    for (int k = 0; k < 32 * k_steps; ++k)
        for (int n = 0; n < n_pad; ++n) {
            const float x = padded[static_cast<std::size_t>(k) * n_pad + n];
            const std::uint32_t want = std::bit_cast<std::uint32_t>(megatts::ref::round_operand(x, 11));
            // k-step k / 32, 8-column group n / 8, core (k % 32) / 4, column n % 8; element k % 4.
            const std::size_t word = ((static_cast<std::size_t>(k / 32) * (n_pad / 8) + n / 8) * 8 + k % 32 / 4) * 8 + n % 8;
            CHECK(component(cores[word], k % 4) == want);
            CHECK(tf32_bits(x) == want);
            ++checked;
        }
    CHECK(checked == 32L * k_steps * n_pad);
}

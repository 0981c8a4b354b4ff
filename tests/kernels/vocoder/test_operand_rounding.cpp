// unit: the reference vocoder's rounded operands (dense_weights::operand_bits, round_operand),
// which model a reduced-precision tensor-core product for precision studies: the rounding
// itself at its edges, a product with rounded operands against the f32 product of the same
// operands rounded beforehand (bit for bit), and for_each_dense's walk over a model's layers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/reference/vocoder/dense_rows.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/vocoder_loader.h"
#include "tests/support/golden_case.h"

using namespace megatts;
using ref::round_operand;

TEST_CASE("round_operand rounds to nearest, ties away from zero, and keeps what is not finite") {
    const float ulp11 = std::ldexp(1.f, -10);  // TF32's unit in the last place at 1
    CHECK(round_operand(1.f + ulp11 / 4, 11) == 1.f);
    CHECK(round_operand(1.f + ulp11 / 2, 11) == 1.f + ulp11);     // a tie: away from zero
    CHECK(round_operand(-1.f - ulp11 / 2, 11) == -1.f - ulp11);
    CHECK(round_operand(1.f + 3 * ulp11 / 4, 11) == 1.f + ulp11);
    CHECK(round_operand(2.f - ulp11 / 4, 11) == 2.f);              // carries into the exponent
    CHECK(round_operand(1.f + std::ldexp(1.f, -23), 24) == 1.f + std::ldexp(1.f, -23));
    CHECK(round_operand(1.f + std::ldexp(1.f, -8), 8) == 1.f + std::ldexp(1.f, -7));  // bf16's tie
    CHECK(std::isinf(round_operand(std::numeric_limits<float>::max(), 11)));
    CHECK(round_operand(std::numeric_limits<float>::infinity(), 11) == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(round_operand(std::numeric_limits<float>::quiet_NaN(), 11)));
    CHECK(round_operand(0.f, 11) == 0.f);

    // Random values: within half a unit of `bits` bits, and exactly representable in them.
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> mantissa(-2.f, 2.f);
    std::uniform_int_distribution<int> exponent(-60, 60);
    for (int bits : {8, 11, 16}) {
        for (int i = 0; i < 100000; ++i) {
            const float v = std::ldexp(mantissa(rng), exponent(rng)), r = round_operand(v, bits);
            int e = 0;
            std::frexp(v, &e);
            const double unit = std::ldexp(1.0, e - bits);  // the last kept bit's weight at v
            REQUIRE(std::fabs(static_cast<double>(r) - v) <= unit / 2);
            REQUIRE(std::fmod(static_cast<double>(r), std::ldexp(1.0, std::max(e, std::ilogb(r) + 1) - bits)) == 0.0);
        }
    }
}

TEST_CASE("a product with rounded operands is the f32 product of the operands rounded first") {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    ref::dense_weights w;
    w.taps = 3;
    w.in = 24;
    w.out = 40;
    for (int i = 0; i < w.taps * w.in * w.out; ++i) w.weight.push_back(normal(rng));
    for (int o = 0; o < w.out; ++o) w.bias.push_back(normal(rng));
    const int rows = 9, dilation = 2;
    std::vector<float> x(static_cast<std::size_t>(rows + (w.taps - 1) * dilation) * w.in);
    for (auto& v : x) v = normal(rng);

    ref::dense_weights rounded = w, prerounded = w;
    rounded.operand_bits = 11;
    for (auto& v : prerounded.weight) v = round_operand(v, 11);
    std::vector<float> x_rounded = x;
    for (auto& v : x_rounded) v = round_operand(v, 11);

    std::vector<float> y(static_cast<std::size_t>(rows) * w.out), want(y.size()), exact(y.size());
    ref::dense_rows(rounded, x.data(), dilation, rows, y.data());
    ref::dense_rows(prerounded, x_rounded.data(), dilation, rows, want.data());
    ref::dense_rows(w, x.data(), dilation, rows, exact.data());
    CHECK(y == want);
    CHECK(y != exact);  // the rounding is not a no-op on normal values
}

TEST_CASE("for_each_dense visits every dense layer of a model once, in decoding order") {
    auto c = checkpoint::open(test::fixture("tiny-cv06"));
    REQUIRE(c.ok());
    auto w = load_vocoder_weights(*c);
    REQUIRE(w.ok());
    std::vector<std::string> names;
    std::set<const ref::dense_weights*> layers;
    ref::for_each_dense(*w, [&](const std::string& name, ref::dense_weights& d) {
        names.push_back(name);
        layers.insert(&d);
    });
    const std::size_t L = w->pre_transformer.layers.size();
    CHECK(names.size() == 2 + 1 + 7 * L + 1 + 2 * 3 + 1 + 4 * 7 + 1);
    CHECK(layers.size() == names.size());
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
    CHECK(names.front() == "dequant_proj");
    CHECK(names[3] == "pre_transformer.layers.0.q");
    CHECK(names.back() == "final_conv");
    CHECK(names[names.size() - 2] == "decoder.4.units.2.conv2");
}

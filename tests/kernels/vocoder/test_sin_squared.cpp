// unit: kernels/vocoder/sin_squared.h, SnakeBeta's sin(y)^2 as the CUDA vocoder computes it,
// against sin(y)^2 in double on the CPU: a dense sweep of |y| <= 300 (activations times
// alpha at full size stay well inside it), random y up to the reduction's range, the
// range's edges, values past it, and where the reduced argument's quadrant changes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/vocoder/sin_squared.h"

using megatts::voc::sin_squared;

namespace {

double error_at(float y) {
    const double s = std::sin(static_cast<double>(y));
    return std::fabs(static_cast<double>(sin_squared(y)) - s * s);
}

}  // namespace

TEST_CASE("sin_squared is within 2e-7 of sin(y)^2 on a dense sweep and random arguments") {
    double worst = 0;
    for (int i = -3000000; i <= 3000000; ++i) worst = std::fmax(worst, error_at(static_cast<float>(i) * 1e-4f));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> wide(-105615.0f, 105615.0f);
    for (int i = 0; i < 2000000; ++i) worst = std::fmax(worst, error_at(wide(rng)));
    // Quadrant boundaries, where k changes parity: k pi / 4 and its neighbours.
    for (int k = -4000; k <= 4000; ++k) {
        const float y = static_cast<float>(k * 0.78539816339744830962);
        worst = std::fmax(worst, std::fmax(error_at(y), std::fmax(error_at(std::nextafter(y, 1e9f)),
                                                                   error_at(std::nextafter(y, -1e9f)))));
    }
    for (float y : {0.0f, -0.0f, 1e-30f, 105615.0f, -105615.0f}) worst = std::fmax(worst, error_at(y));
    std::printf("sin_squared: max error %.3g over 8 M arguments\n", worst);
    CHECK(worst <= 2e-7);
}

TEST_CASE("sin_squared past the reduction's range and on non-finite input is sinf's square") {
    for (float y : {105616.0f, -2.5e6f, 1e30f}) {
        const float s = std::sin(y);
        CHECK(sin_squared(y) == s * s);
    }
    CHECK(std::isnan(sin_squared(std::numeric_limits<float>::quiet_NaN())));
    CHECK(std::isnan(sin_squared(std::numeric_limits<float>::infinity())));
}

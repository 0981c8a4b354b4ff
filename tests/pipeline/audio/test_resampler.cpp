#include "pipeline/audio/resampler.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "tests/pipeline/audio/test_signal.h"

namespace megatts {
namespace {

// Streams `input` through `converter` in irregular blocks, so that every filter state carried
// across calls is exercised, and returns everything it produced, flush included.
std::vector<float> resample_in_blocks(resampler& converter, const std::vector<float>& input) {
    static constexpr std::size_t blocks[] = {1920, 1, 333, 1920, 7, 4000, 480};
    std::vector<float> output;
    std::size_t at = 0;
    for (std::size_t i = 0; at < input.size(); ++i) {
        const std::size_t block = std::min(blocks[i % std::size(blocks)], input.size() - at);
        auto converted = converter.process(std::span(input).subspan(at, block));
        REQUIRE(converted.ok());
        output.insert(output.end(), converted->begin(), converted->end());
        at += block;
    }
    auto tail = converter.flush();
    REQUIRE(tail.ok());
    output.insert(output.end(), tail->begin(), tail->end());
    return output;
}

// Frequency from rising zero crossings, between the first and the last, so that the filter's
// ramp at either end cannot bias it.
double measured_frequency(const std::vector<float>& samples, int rate) {
    std::vector<double> crossings;
    for (std::size_t i = 1; i < samples.size(); ++i) {
        if (samples[i - 1] < 0.0f && samples[i] >= 0.0f) {
            // Interpolated between the two samples for sub-sample precision.
            const double fraction = samples[i - 1] / (samples[i - 1] - samples[i]);
            crossings.push_back(static_cast<double>(i - 1) + fraction);
        }
    }
    REQUIRE(crossings.size() > 2);
    return (crossings.size() - 1) * rate / (crossings.back() - crossings.front());
}

TEST_CASE("resampler: streamed output has the expected length and keeps the pitch") {
    const int rate = GENERATE(48000, 16000, 8000, 44100);
    INFO("output rate " << rate);
    constexpr std::size_t input_count = 29616;  // 1.234 s at 24 kHz
    const std::vector<float> input = test::sine_samples(24000, input_count, 440.0);

    auto converter = resampler::create(rate);
    REQUIRE(converter.ok());
    CHECK(converter->output_rate() == rate);
    const std::vector<float> output = resample_in_blocks(*converter, input);

    const double expected_count = static_cast<double>(input_count) * rate / 24000;
    CHECK(std::abs(static_cast<double>(output.size()) - expected_count) <= 1.0);
    CHECK(measured_frequency(output, rate) == Approx(440.0).margin(0.5));

    // Time-aligned with the input: the same sine sampled at the output rate, away from the
    // filter's start-up and end ramps.
    const std::vector<float> expected = test::sine_samples(rate, output.size(), 440.0);
    const std::size_t edge = static_cast<std::size_t>(rate / 100);
    const std::size_t middle = output.size() - 2 * edge;
    CHECK(test::normalized_correlation(std::span(output).subspan(edge, middle),
                                       std::span(expected).subspan(edge, middle)) > 0.999);
}

TEST_CASE("resampler: after flush the next stream starts from a clean state") {
    const std::vector<float> input = test::sine_samples(24000, 4800, 440.0);
    auto converter = resampler::create(48000);
    REQUIRE(converter.ok());
    const std::vector<float> first = resample_in_blocks(*converter, input);
    const std::vector<float> second = resample_in_blocks(*converter, input);
    CHECK(first == second);
}

TEST_CASE("resampler: a no-op or unsupported rate is refused") {
    for (const int rate : {24000, 7999, 48001, 0}) {
        INFO("output rate " << rate);
        CHECK(resampler::create(rate).err().kind == error_kind::invalid_input);
    }
}

}  // namespace
}  // namespace megatts

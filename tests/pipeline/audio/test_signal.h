// Test signals and signal comparisons shared by the audio tests.
//
// Contract: pure functions, header-only. Signals are defined as functions of time so that one
// can be sampled at 24 kHz as input and at another rate as the expected output of a codec or
// resampler.
#pragma once

#include <cmath>
#include <cstddef>
#include <numbers>
#include <span>
#include <vector>

namespace megatts::test {

inline constexpr double tone_hz = 440.0;
inline constexpr double chirp_start_hz = 200.0;
inline constexpr double chirp_end_hz = 4000.0;

// A 440 Hz tone plus a linear chirp over `duration` seconds: a steady component and one whose
// frequency changes, so a signal that is late, early or resampled wrongly cannot correlate.
inline double tone_and_chirp(double t, double duration) {
    const double chirp_phase =
        chirp_start_hz * t + (chirp_end_hz - chirp_start_hz) * t * t / (2.0 * duration);
    return 0.3 * std::sin(2.0 * std::numbers::pi * tone_hz * t) +
           0.3 * std::sin(2.0 * std::numbers::pi * chirp_phase);
}

inline std::vector<float> tone_and_chirp_samples(int rate, std::size_t count, double duration) {
    std::vector<float> samples(count);
    for (std::size_t i = 0; i < count; ++i) {
        samples[i] = static_cast<float>(tone_and_chirp(static_cast<double>(i) / rate, duration));
    }
    return samples;
}

inline std::vector<float> sine_samples(int rate, std::size_t count, double hz) {
    std::vector<float> samples(count);
    for (std::size_t i = 0; i < count; ++i) {
        samples[i] = static_cast<float>(0.5 * std::sin(2.0 * std::numbers::pi * hz * i / rate));
    }
    return samples;
}

// Normalized cross-correlation of two equally long signals at lag 0: 1 for equal shapes, near
// 0 for unrelated signals.
inline double normalized_correlation(std::span<const float> a, std::span<const float> b) {
    double ab = 0.0;
    double aa = 0.0;
    double bb = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        ab += static_cast<double>(a[i]) * b[i];
        aa += static_cast<double>(a[i]) * a[i];
        bb += static_cast<double>(b[i]) * b[i];
    }
    return ab / std::sqrt(aa * bb);
}

struct alignment {
    std::ptrdiff_t lag = 0;
    double correlation = 0.0;
};

// Where `delayed` best matches `reference`: the lag within `tolerance` of `nominal_lag` that
// maximises the correlation of delayed[i + lag] with reference[i], over the reference less
// `tolerance` samples at either end, so that every lag compares the same reference samples.
// `delayed` must hold at least reference.size() + nominal_lag samples.
inline alignment best_alignment(std::span<const float> delayed, std::span<const float> reference,
                                std::ptrdiff_t nominal_lag, std::ptrdiff_t tolerance) {
    const auto margin = static_cast<std::size_t>(tolerance);
    const std::span<const float> compared =
        reference.subspan(margin, reference.size() - 2 * margin);
    alignment best{nominal_lag, -1.0};
    for (std::ptrdiff_t lag = nominal_lag - tolerance; lag <= nominal_lag + tolerance; ++lag) {
        const auto start = static_cast<std::size_t>(tolerance + lag);
        const double correlation =
            normalized_correlation(delayed.subspan(start, compared.size()), compared);
        if (correlation > best.correlation) best = {lag, correlation};
    }
    return best;
}

}  // namespace megatts::test

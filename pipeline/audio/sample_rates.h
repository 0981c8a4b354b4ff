// The two sample rates every audio path in megatts is built around.
//
// Contract: compile-time constants, no state. vocoder_sample_rate is the rate of the PCM the
// vocoder produces (24 kHz mono float); PCM outputs at other rates are resampled from it, while
// Opus codes it directly. opus_granule_rate is the clock of Opus timestamps: Ogg granule
// positions and the OpusHead pre-skip count 48 kHz samples whatever rate was coded (RFC 7845 §4).
#pragma once

namespace megatts {

inline constexpr int vocoder_sample_rate = 24000;
inline constexpr int opus_granule_rate = 48000;

}  // namespace megatts

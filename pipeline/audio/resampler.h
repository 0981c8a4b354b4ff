// Streaming sample-rate conversion of the vocoder's 24 kHz mono PCM to the rate a PCM or WAV
// client asked for.
//
// In: float blocks at 24 kHz (vocoder_sample_rate), any size. Out: the converted samples that
// are ready, per process() call; the filter holds a few back until later input arrives, and
// flush() returns them, ending the stream and resetting the state so that the next process()
// starts a new one. Over a stream the output totals N * output_rate / 24000 samples, +-1.
//
// Only built when the requested rate differs from 24 kHz; the caller decides, and create()
// refuses 24000 so that a no-op conversion can never cost a filter's CPU and delay. Opus never
// needs one: it codes 24 kHz directly.
//
// Converter: SRC_SINC_FASTEST (97 dB SNR, passband 80% of the lower Nyquist frequency). Measured
// with libsamplerate 0.2.2 on the 2-core dev machine, for 80 ms input blocks: 24->48 kHz costs
// 3.0 ms of CPU per second of audio and holds back 0.8 ms of output; 24->16 kHz 1.3 ms and
// 1.3 ms. SRC_SINC_MEDIUM_QUALITY costs twice the CPU and more than twice the delay for a 90%
// passband: at 48 kHz out that raises the passband edge from 9.6 to 10.8 kHz, at 16 kHz from
// 6.4 to 7.2 kHz, where speech carries little energy. A resampler runs in every PCM session at
// a rate other than 24 kHz, so the cheaper, lower-latency converter wins.
//
// Thread: one owner at a time; not thread-safe. Blocking: no, CPU only. Errors: invalid_input
// from create() for a rate outside 8000..48000 or equal to 24000; internal if libsamplerate
// fails, after which the resampler must be discarded.
#pragma once

#include <samplerate.h>

#include <memory>
#include <span>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

class resampler {
public:
    static result<resampler> create(int output_rate);

    result<std::vector<float>> process(std::span<const float> input);
    result<std::vector<float>> flush();

    int output_rate() const { return output_rate_; }

private:
    struct state_deleter {
        void operator()(SRC_STATE* state) const;
    };

    resampler(std::unique_ptr<SRC_STATE, state_deleter> state, int output_rate);

    result<void> convert(std::span<const float> input, bool end_of_input, std::vector<float>& out);

    std::unique_ptr<SRC_STATE, state_deleter> state_;
    int output_rate_;
    double ratio_;
};

}  // namespace megatts

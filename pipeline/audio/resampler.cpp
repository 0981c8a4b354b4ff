#include "pipeline/audio/resampler.h"

#include <cmath>
#include <string>
#include <utility>

#include "pipeline/audio/sample_rates.h"

namespace megatts {
namespace {

constexpr int min_output_rate = 8000;
constexpr int max_output_rate = 48000;

// Output room per src_process call beyond input * ratio: the filter may release samples it held
// back from earlier input (tens at these ratios) along with the new ones.
constexpr long output_slack = 256;

error src_failure(int status) {
    return make_error(error_kind::internal,
                      std::string("resampler: libsamplerate: ") + src_strerror(status));
}

}  // namespace

void resampler::state_deleter::operator()(SRC_STATE* state) const {
    src_delete(state);
}

result<resampler> resampler::create(int output_rate) {
    if (output_rate < min_output_rate || output_rate > max_output_rate ||
        output_rate == vocoder_sample_rate) {
        return make_error(error_kind::invalid_input,
                          "resampler: output rate must be 8000..48000 and not 24000, got " +
                              std::to_string(output_rate));
    }
    int status = 0;
    std::unique_ptr<SRC_STATE, state_deleter> state(src_new(SRC_SINC_FASTEST, 1, &status));
    if (!state) return src_failure(status);
    return resampler(std::move(state), output_rate);
}

resampler::resampler(std::unique_ptr<SRC_STATE, state_deleter> state, int output_rate)
    : state_(std::move(state)),
      output_rate_(output_rate),
      ratio_(static_cast<double>(output_rate) / vocoder_sample_rate) {}

result<std::vector<float>> resampler::process(std::span<const float> input) {
    std::vector<float> out;
    MEGATTS_TRY(convert(input, false, out));
    return out;
}

result<std::vector<float>> resampler::flush() {
    std::vector<float> out;
    MEGATTS_TRY(convert({}, true, out));
    const int status = src_reset(state_.get());
    if (status != 0) return src_failure(status);
    return out;
}

result<void> resampler::convert(std::span<const float> input, bool end_of_input,
                                std::vector<float>& out) {
    static constexpr float no_input = 0.0f;
    SRC_DATA data{};
    data.src_ratio = ratio_;
    data.end_of_input = end_of_input ? 1 : 0;
    // Without end of input, libsamplerate consumes everything given enough room; at end of
    // input it keeps releasing held-back samples until it returns none.
    while (true) {
        const auto input_left = static_cast<long>(input.size());
        const long room = static_cast<long>(std::ceil(input_left * ratio_)) + output_slack;
        const std::size_t written = out.size();
        out.resize(written + static_cast<std::size_t>(room));
        // libsamplerate 0.2.2 returns success and no output for a null data_in, even when
        // draining at end of input, so an empty span must still point somewhere.
        data.data_in = input.empty() ? &no_input : input.data();
        data.input_frames = input_left;
        data.data_out = out.data() + written;
        data.output_frames = room;
        const int status = src_process(state_.get(), &data);
        if (status != 0) return src_failure(status);
        out.resize(written + static_cast<std::size_t>(data.output_frames_gen));
        input = input.subspan(static_cast<std::size_t>(data.input_frames_used));
        if (input.empty() && (!end_of_input || data.output_frames_gen == 0)) return {};
    }
}

}  // namespace megatts

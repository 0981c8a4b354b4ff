// The frame source of the CPU reference backend: ref::generator as it is.
#include "pipeline/synthesis/frame_source.h"

namespace megatts {
namespace {

class reference_frame_source final : public frame_source {
public:
    reference_frame_source(const ref::talker_weights& talker, const ref::code_predictor_weights& cp,
                           const ref::generation_options& options)
        : gen_(talker, cp, options) {}

    result<void> prefill(std::span<const prompt_row> rows) override {
        gen_.prefill(rows);
        return {};
    }
    result<std::optional<ref::frame_codes>> next_frame(std::int32_t text_track_id) override {
        return gen_.next_frame(text_track_id);
    }

private:
    ref::generator gen_;
};

}  // namespace

std::unique_ptr<frame_source> make_reference_frame_source(const ref::talker_weights& talker,
                                                          const ref::code_predictor_weights& cp,
                                                          const ref::generation_options& options) {
    return std::make_unique<reference_frame_source>(talker, cp, options);
}

}  // namespace megatts

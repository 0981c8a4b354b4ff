#include "pipeline/synthesis/cuda_frame_source.h"

#include <array>

#include "kernels/megakernel/megakernel.h"
#include "pipeline/model/megakernel_loader.h"

namespace megatts {
namespace {

class cuda_frame_source final : public frame_source {
public:
    cuda_frame_source(std::unique_ptr<megakernel> gpu, const ref::generation_options& options, std::int32_t eos)
        : gpu_(std::move(gpu)), options_(options), eos_(eos) {}

    result<void> prefill(std::span<const prompt_row> rows) override { return gpu_->set_prompt(k_slot, rows); }

    result<std::optional<ref::frame_codes>> next_frame(std::int32_t text_track_id) override {
        frame_item item{.slot = k_slot, .frame = frame_, .seed = options_.seed, .talker = options_.talker,
                        .code_predictor = options_.code_predictor,
                        .repetition_penalty = options_.processors.repetition_penalty,
                        .text_id = text_track_id};
        ref::frame_codes codes{};
        MEGATTS_TRY(gpu_->run_frame({&item, 1}, codes));
        if (codes[0] == eos_) return std::optional<ref::frame_codes>{};
        ++frame_;
        return std::optional<ref::frame_codes>{codes};
    }

private:
    static constexpr int k_slot = 0;
    std::unique_ptr<megakernel> gpu_;
    ref::generation_options options_;
    std::int32_t eos_;
    int frame_ = 0;
};

}  // namespace

result<std::unique_ptr<frame_source>> make_cuda_frame_source(const checkpoint& c,
                                                             const ref::generation_options& options) {
    const auto& cfg = c.config();
    auto gpu = megakernel::create(megakernel_tensors_from(c), {.slots = 1, .max_positions = cfg.max_positions > 8192 ? 8192 : cfg.max_positions},
                                  megakernel_policy_from(cfg), cfg.talker.body.rms_eps, cfg.talker.body.rope_theta);
    if (!gpu) return gpu.err();
    return std::unique_ptr<frame_source>(new cuda_frame_source(std::move(gpu.value()), options, cfg.codec_ids.eos));
}

}  // namespace megatts

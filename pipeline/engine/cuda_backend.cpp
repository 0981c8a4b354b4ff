#include "pipeline/engine/cuda_backend.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cuda/launch_timer.h"
#include "kernels/megakernel/megakernel.h"
#include "kernels/vocoder/cuda_vocoder.h"
#include "pipeline/model/megakernel_loader.h"

namespace megatts {
namespace {

result<void> check_sampling(const ref::sampling_params& p, const char* level) {
    if (p.greedy || (p.top_k >= 1 && p.top_k <= k_megakernel_max_top_k)) return {};
    return make_error(error_kind::invalid_input, std::string("the cuda backend samples the ") + level +
                                                     " with top_k in 1.." + std::to_string(k_megakernel_max_top_k) +
                                                     ", not " + std::to_string(p.top_k));
}

class cuda_backend final : public engine_backend {
public:
    // The device parts, created by make_cuda_backend().
    struct parts {
        std::unique_ptr<megakernel> gpu;
        std::unique_ptr<cuda_vocoder> vocoder;
        std::unique_ptr<launch_timer> frame_timer;   // the frame launches' device spans
        std::unique_ptr<launch_timer> vocode_timer;  // the vocoder calls' device spans
    };

    cuda_backend(const reference_model& model, parts p, int slots, int max_positions)
        : gpu_(std::move(p.gpu)),
          vocoder_(std::move(p.vocoder)),
          frame_timer_(std::move(p.frame_timer)),
          vocode_timer_(std::move(p.vocode_timer)),
          limits_{.slots = slots,
                  .max_positions = max_positions,
                  .max_batch = std::min(slots, k_megakernel_max_sessions),
                  .max_rows = k_megakernel_max_rows,
                  .max_prompt_rows = k_megakernel_max_prompt_rows,
                  .prefill_in_step = true},
          options_(static_cast<std::size_t>(slots)),
          groups_(static_cast<std::size_t>(model.config().talker.num_code_groups)),
          eos_(model.config().codec_ids.eos) {
        gpu_->time_launches(frame_timer_.get());
        vocoder_->time_calls(vocode_timer_.get());
    }

    std::string_view name() const override { return "cuda"; }
    backend_limits limits() const override { return limits_; }

    result<void> open(int slot, std::span<const prompt_row> prompt, const ref::generation_options& options) override {
        MEGATTS_TRY(check_sampling(options.talker, "talker"));
        MEGATTS_TRY(check_sampling(options.code_predictor, "code predictor"));
        MEGATTS_TRY(watch(gpu_->set_prompt(slot, prompt)));
        options_[static_cast<std::size_t>(slot)] = options;
        return watch(vocoder_->admit(slot));
    }

    result<void> generate(std::span<const generate_item> items, std::span<std::optional<ref::frame_codes>> out,
                          const std::function<void()>& meanwhile) override {
        device_span_.reset();
        items_.clear();
        for (const auto& it : items) {
            const auto& o = options_[static_cast<std::size_t>(it.slot)];
            items_.push_back({.slot = it.slot,
                              .frame = it.frame,
                              .seed = o.seed,
                              .talker = o.talker,
                              .code_predictor = o.code_predictor,
                              .repetition_penalty = o.processors.repetition_penalty,
                              .text_id = it.text_id});
        }
        codes_.assign(items.size() * ref::k_max_code_groups, 0);
        // The frame's launch waits on the GPU, not here, for the audio of the vocoder's last
        // launch, whose collection `meanwhile` may hold: the persistent frame kernel wants every
        // multiprocessor to itself.
        MEGATTS_TRY(watch(vocoder_->queue_wait(gpu_->stream())));
        MEGATTS_TRY(watch(gpu_->run_frame(items_, codes_, false, meanwhile)));
        device_span_ = frame_timer_->read();
        for (std::size_t i = 0; i < items.size(); ++i) {
            ref::frame_codes c{};
            std::copy_n(codes_.begin() + static_cast<std::ptrdiff_t>(i * ref::k_max_code_groups), c.size(), c.begin());
            out[i] = c[0] == eos_ ? std::nullopt : std::optional(c);
        }
        return {};
    }

    result<void> start_vocode(std::span<const vocode_item> items) override {
        frames_.clear();
        for (const auto& it : items) frames_.push_back({.slot = it.slot, .codes = std::span(it.codes).first(groups_)});
        return watch(vocoder_->launch(frames_));
    }

    result<void> finish_vocode(std::span<std::vector<float>> out) override {
        device_span_.reset();
        const auto per_frame = static_cast<std::size_t>(vocoder_->samples_per_frame());
        pcm_.resize(out.size() * per_frame);
        MEGATTS_TRY(watch(vocoder_->collect(pcm_)));
        device_span_ = vocode_timer_->read();
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto first = pcm_.begin() + static_cast<std::ptrdiff_t>(i * per_frame);
            out[i].assign(first, first + static_cast<std::ptrdiff_t>(per_frame));
        }
        return {};
    }

    void release(int slot) override {
        gpu_->release(slot);
        vocoder_->release(slot);
    }

    bool failed() const override { return failed_ || gpu_->failed() || vocoder_->failed(); }
    std::optional<host_span> last_device_span() const override { return device_span_; }

private:
    // A CUDA failure (error_kind::unavailable from the megakernel or the vocoder) leaves the
    // context unusable.
    result<void> watch(result<void> r) {
        if (!r && r.err().kind == error_kind::unavailable) failed_ = true;
        return r;
    }

    std::unique_ptr<megakernel> gpu_;
    std::unique_ptr<cuda_vocoder> vocoder_;
    std::unique_ptr<launch_timer> frame_timer_;
    std::unique_ptr<launch_timer> vocode_timer_;
    std::optional<host_span> device_span_;  // of the last generate() or finish_vocode()
    backend_limits limits_;
    std::vector<ref::generation_options> options_;  // by slot
    std::size_t groups_;  // codes per frame the vocoder reads
    std::int32_t eos_;
    bool failed_ = false;
    std::vector<frame_item> items_;     // reused per step
    std::vector<std::int32_t> codes_;   // [items][16]
    std::vector<vocoder_frame> frames_;  // reused per start_vocode()
    std::vector<float> pcm_;             // [items][samples per frame]
};

}  // namespace

result<std::unique_ptr<engine_backend>> make_cuda_backend(const reference_model& model, int slots, int max_positions,
                                                          bool vocoder_tf32) {
    const auto& cfg = model.config();
    auto gpu = megakernel::create(megakernel_tensors_from(model.ckpt), {.slots = slots, .max_positions = max_positions},
                                  megakernel_policy_from(cfg), cfg.talker.body.rms_eps, cfg.talker.body.rope_theta);
    if (!gpu) return gpu.err();
    auto vocoder = cuda_vocoder::create(model.vocoder, {.slots = slots,
                                                        .max_batch = std::min(slots, k_megakernel_max_sessions),
                                                        .tf32_convs = vocoder_tf32});
    if (!vocoder) return vocoder.err();
    auto frame_timer = launch_timer::create();
    if (!frame_timer) return frame_timer.err();
    auto vocode_timer = launch_timer::create();
    if (!vocode_timer) return vocode_timer.err();
    return std::unique_ptr<engine_backend>(
        new cuda_backend(model,
                         {std::move(gpu.value()), std::move(vocoder.value()), std::move(frame_timer.value()),
                          std::move(vocode_timer.value())},
                         slots, max_positions));
}

}  // namespace megatts

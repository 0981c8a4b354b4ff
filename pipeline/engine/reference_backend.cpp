#include "pipeline/engine/reference_backend.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "pipeline/engine/reference_vocoder_bank.h"

namespace megatts {
namespace {

class reference_backend final : public engine_backend {
public:
    reference_backend(const reference_model& model, int slots, int max_positions)
        : model_(model),
          limits_{.slots = slots, .max_positions = max_positions, .max_batch = slots},
          generators_(static_cast<std::size_t>(slots)),
          vocoders_(model.vocoder, slots, model.config().talker.num_code_groups) {}

    std::string_view name() const override { return "cpu"; }
    backend_limits limits() const override { return limits_; }

    result<void> open(int slot, std::span<const prompt_row> prompt, const ref::generation_options& options) override {
        auto& g = generators_[static_cast<std::size_t>(slot)];
        g.emplace(model_.talker, model_.code_predictor, options);
        g->prefill(prompt);
        vocoders_.open(slot);
        return {};
    }

    result<void> generate(std::span<const generate_item> items, std::span<std::optional<ref::frame_codes>> out,
                          const std::function<void()>& meanwhile) override {
        // The frame is computed on this thread: nothing to overlap.
        if (meanwhile) meanwhile();
        for (std::size_t i = 0; i < items.size(); ++i) {
            auto& g = generators_[static_cast<std::size_t>(items[i].slot)];
            if (!g) return make_error(error_kind::internal, "generate: slot " + std::to_string(items[i].slot) + " is not open");
            out[i] = g->next_frame(items[i].text_id);
        }
        return {};
    }

    // Decoded at once, on this thread: a slot released before finish_vocode() has nothing left
    // to decode then.
    result<void> start_vocode(std::span<const vocode_item> items) override {
        pcm_.resize(items.size());
        return vocoders_.decode(items, pcm_);
    }

    result<void> finish_vocode(std::span<std::vector<float>> out) override {
        std::move(pcm_.begin(), pcm_.begin() + static_cast<std::ptrdiff_t>(out.size()), out.begin());
        pcm_.clear();
        return {};
    }

    void release(int slot) override {
        generators_[static_cast<std::size_t>(slot)].reset();
        vocoders_.release(slot);
    }

    bool failed() const override { return false; }

private:
    const reference_model& model_;
    backend_limits limits_;
    std::vector<std::optional<ref::generator>> generators_;
    reference_vocoder_bank vocoders_;
    std::vector<std::vector<float>> pcm_;  // of the last start_vocode()
};

}  // namespace

std::unique_ptr<engine_backend> make_reference_backend(const reference_model& model, int slots, int max_positions) {
    return std::make_unique<reference_backend>(model, slots, max_positions);
}

}  // namespace megatts

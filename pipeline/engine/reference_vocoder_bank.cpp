#include "pipeline/engine/reference_vocoder_bank.h"

namespace megatts {

reference_vocoder_bank::reference_vocoder_bank(const ref::vocoder_weights& weights, int slots, int groups)
    : weights_(weights), streams_(static_cast<std::size_t>(slots)), groups_(groups) {}

void reference_vocoder_bank::open(int slot) { streams_[static_cast<std::size_t>(slot)].emplace(weights_); }

void reference_vocoder_bank::release(int slot) { streams_[static_cast<std::size_t>(slot)].reset(); }

result<void> reference_vocoder_bank::decode(std::span<const vocode_item> items, std::span<std::vector<float>> out) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto& stream = streams_[static_cast<std::size_t>(items[i].slot)];
        if (!stream) return make_error(error_kind::internal, "vocoder: slot " + std::to_string(items[i].slot) + " is not open");
        auto pcm = stream->decode(std::span(items[i].codes).first(static_cast<std::size_t>(groups_)), 1);
        if (!pcm) return pcm.err();
        out[i] = std::move(pcm.value());
    }
    return {};
}

}  // namespace megatts

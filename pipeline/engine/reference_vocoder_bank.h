// reference_vocoder_bank: the vocoder side of a backend on the CPU reference: one
// ref::vocoder_stream per slot (its causal state), decoding a batch frame by frame, item by
// item: the reference backend's engine_backend::start_vocode().
//
// Contract: open(slot) starts a fresh stream (the previous one of the slot is dropped),
// release(slot) drops it. decode() takes items of open slots; it fails with the stream's
// invalid_input for codes out of range (nothing decoded for that item and those after it).
// Engine thread only; blocking CPU work (about 0.3 s of one core per frame at full size). The
// weights must outlive the bank.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_stream.h"
#include "pipeline/engine/engine_backend.h"

namespace megatts {

class reference_vocoder_bank {
public:
    reference_vocoder_bank(const ref::vocoder_weights& weights, int slots, int groups);

    void open(int slot);
    void release(int slot);
    result<void> decode(std::span<const vocode_item> items, std::span<std::vector<float>> out);

private:
    const ref::vocoder_weights& weights_;
    std::vector<std::optional<ref::vocoder_stream>> streams_;
    int groups_;
};

}  // namespace megatts

#include "pipeline/synthesis/cuda_frame_vocoder.h"

#include "kernels/vocoder/cuda_vocoder.h"

namespace megatts {
namespace {

class cuda_frame_vocoder final : public frame_vocoder {
public:
    explicit cuda_frame_vocoder(std::unique_ptr<cuda_vocoder> gpu) : gpu_(std::move(gpu)) {}

    result<std::vector<float>> decode(std::span<const std::int32_t> codes) override {
        std::vector<float> pcm(static_cast<std::size_t>(gpu_->samples_per_frame()));
        const vocoder_frame frame{.slot = k_slot, .codes = codes};
        MEGATTS_TRY(gpu_->vocode({&frame, 1}, pcm));
        return pcm;
    }

private:
    static constexpr int k_slot = 0;
    std::unique_ptr<cuda_vocoder> gpu_;
};

}  // namespace

result<std::unique_ptr<frame_vocoder>> make_cuda_frame_vocoder(const ref::vocoder_weights& weights) {
    auto gpu = cuda_vocoder::create(weights, {.slots = 1, .max_batch = 1});
    if (!gpu) return gpu.err();
    MEGATTS_TRY((*gpu)->admit(0));
    return std::unique_ptr<frame_vocoder>(new cuda_frame_vocoder(std::move(*gpu)));
}

}  // namespace megatts

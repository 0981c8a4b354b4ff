#include "kernels/reference/vocoder/vocoder_stream.h"
#include "pipeline/synthesis/frame_vocoder.h"

namespace megatts {
namespace {

class reference_frame_vocoder final : public frame_vocoder {
public:
    explicit reference_frame_vocoder(const ref::vocoder_weights& weights) : stream_(weights) {}

    result<std::vector<float>> decode(std::span<const std::int32_t> codes) override { return stream_.decode(codes, 1); }

private:
    ref::vocoder_stream stream_;
};

}  // namespace

std::unique_ptr<frame_vocoder> make_reference_frame_vocoder(const ref::vocoder_weights& weights) {
    return std::make_unique<reference_frame_vocoder>(weights);
}

}  // namespace megatts

// The CUDA vocoder of a build without CUDA: create() says so; nothing else is reachable.
#include "kernels/vocoder/cuda_vocoder.h"

namespace megatts {

struct cuda_vocoder::impl {};

cuda_vocoder::cuda_vocoder(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
cuda_vocoder::~cuda_vocoder() = default;

result<std::unique_ptr<cuda_vocoder>> cuda_vocoder::create(const ref::vocoder_weights&, const cuda_vocoder_limits&) {
    return make_error(error_kind::unavailable, "this megatts was built without CUDA (meson -Dcuda=disabled)");
}

result<void> cuda_vocoder::admit(int) { return make_error(error_kind::internal, "no CUDA"); }
void cuda_vocoder::release(int) {}
result<void> cuda_vocoder::vocode(std::span<const vocoder_frame>, std::span<float>) {
    return make_error(error_kind::internal, "no CUDA");
}
result<void> cuda_vocoder::launch(std::span<const vocoder_frame>) {
    return make_error(error_kind::internal, "no CUDA");
}
result<void> cuda_vocoder::collect(std::span<float>) { return make_error(error_kind::internal, "no CUDA"); }
result<void> cuda_vocoder::queue_wait(void*) { return make_error(error_kind::internal, "no CUDA"); }
result<std::vector<float>> cuda_vocoder::read_stage(ref::vocoder_stage, int, int) const {
    return make_error(error_kind::internal, "no CUDA");
}
void cuda_vocoder::time_calls(launch_timer*) {}
int cuda_vocoder::samples_per_frame() const { return 0; }
int cuda_vocoder::frames_decoded(int) const { return 0; }
bool cuda_vocoder::frame_stack_for(int) const { return false; }
bool cuda_vocoder::failed() const { return true; }
std::size_t cuda_vocoder::weight_bytes() const { return 0; }
std::size_t cuda_vocoder::state_bytes_per_slot() const { return 0; }

}  // namespace megatts

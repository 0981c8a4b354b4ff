// The megakernel of a build without CUDA: create() says so; nothing else is reachable.
#include "kernels/megakernel/megakernel.h"

namespace megatts {

struct megakernel::impl {};

megakernel::megakernel(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
megakernel::~megakernel() = default;

result<std::unique_ptr<megakernel>> megakernel::create(const megakernel_tensors&, const megakernel_limits&,
                                                       const megakernel_policy&, float, float) {
    return make_error(error_kind::unavailable, "this megatts was built without CUDA (meson -Dcuda=disabled)");
}

result<void> megakernel::set_prompt(int, std::span<const prompt_row>) { return make_error(error_kind::internal, "no CUDA"); }
void megakernel::release(int) {}
result<void> megakernel::run_frame(std::span<const frame_item>, std::span<std::int32_t>, bool,
                                   const std::function<void()>&) {
    return make_error(error_kind::internal, "no CUDA");
}
void megakernel::time_launches(launch_timer*) {}
result<void> megakernel::log_phases(bool) { return make_error(error_kind::internal, "no CUDA"); }
result<std::vector<phase_span>> megakernel::read_phases() const { return make_error(error_kind::internal, "no CUDA"); }
result<frame_debug> megakernel::read_debug(int) const { return make_error(error_kind::internal, "no CUDA"); }
int megakernel::positions(int) const { return 0; }
bool megakernel::failed() const { return true; }
int megakernel::grid_blocks() const { return 0; }
void* megakernel::stream() const { return nullptr; }

}  // namespace megatts

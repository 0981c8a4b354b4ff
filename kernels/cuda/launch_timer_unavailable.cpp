// The launch timer of a build without CUDA: create() says so; nothing else is reachable.
#include "kernels/cuda/launch_timer.h"

namespace megatts {

struct launch_timer::impl {};

launch_timer::launch_timer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
launch_timer::~launch_timer() = default;

result<std::unique_ptr<launch_timer>> launch_timer::create() {
    return make_error(error_kind::unavailable, "this megatts was built without CUDA");
}

result<void> launch_timer::begin(void*) { return make_error(error_kind::internal, "no CUDA"); }
result<void> launch_timer::end(void*) { return make_error(error_kind::internal, "no CUDA"); }
std::optional<host_span> launch_timer::read() { return std::nullopt; }

}  // namespace megatts

#include "kernels/reference/vocoder/left_context.h"

#include <cstddef>

namespace megatts::ref {

left_context::left_context(int rows, int width)
    : rows_(rows), width_(width), buf_(static_cast<std::size_t>(rows) * width, 0.f) {}

std::span<const float> left_context::extend(std::span<const float> input) {
    const auto keep = static_cast<std::ptrdiff_t>(rows_) * width_;
    buf_.erase(buf_.begin(), buf_.end() - keep);
    buf_.insert(buf_.end(), input.begin(), input.end());
    return buf_;
}

}  // namespace megatts::ref

// The bandwidth probe of a build without CUDA.
#include "kernels/cuda/copy_bandwidth.h"

namespace megatts {

result<double> measure_copy_bandwidth(std::size_t, int) {
    return make_error(error_kind::unavailable, "this megatts was built without CUDA");
}

}  // namespace megatts

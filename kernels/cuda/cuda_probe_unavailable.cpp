// The CUDA probe of a build without CUDA: it reports that plainly.
#include "kernels/cuda/cuda_probe.h"

namespace megatts {

cuda_report probe_cuda() {
    cuda_report r;
    r.problem = "this build has no CUDA support";
    return r;
}

}  // namespace megatts

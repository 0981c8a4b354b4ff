#include "kernels/cuda/launch_timer.h"

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"

namespace megatts {
namespace {

using clock = std::chrono::steady_clock;

// Past this age the anchor is renewed: float milliseconds keep ~0.1 µs and clock drift
// (tens of ppm) stays in the tens of microseconds.
constexpr auto k_reanchor = std::chrono::seconds(1);

}  // namespace

struct launch_timer::impl {
    cudaEvent_t anchor = nullptr, begin = nullptr, end = nullptr;
    // The anchor's stream: nothing else runs on it, so the GPU timestamps the anchor as it is
    // recorded, whatever the timed stream still has queued (a wait for another stream's work).
    cudaStream_t idle = nullptr;
    std::optional<clock::time_point> anchor_host;
    bool pending = false;  // a pair was recorded and not read

    ~impl() {
        for (auto e : {anchor, begin, end})
            if (e) cudaEventDestroy(e);
        if (idle) cudaStreamDestroy(idle);
    }

    clock::time_point at(cudaEvent_t e, bool& ok) const {
        float ms = 0;
        ok = ok && cudaEventElapsedTime(&ms, anchor, e) == cudaSuccess;
        return *anchor_host + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(ms));
    }
};

launch_timer::launch_timer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
launch_timer::~launch_timer() = default;

result<std::unique_ptr<launch_timer>> launch_timer::create() {
    auto p = std::make_unique<impl>();
    for (auto* e : {&p->anchor, &p->begin, &p->end}) CUDA_TRY(cudaEventCreate(e));
    CUDA_TRY(cudaStreamCreateWithFlags(&p->idle, cudaStreamNonBlocking));
    return std::unique_ptr<launch_timer>(new launch_timer(std::move(p)));
}

result<void> launch_timer::begin(void* stream) {
    auto& p = *impl_;
    auto s = static_cast<cudaStream_t>(stream);
    if (!p.anchor_host || clock::now() - *p.anchor_host > k_reanchor) {
        CUDA_TRY(cudaEventRecord(p.anchor, p.idle));
        p.anchor_host = clock::now();
    }
    CUDA_TRY(cudaEventRecord(p.begin, s));
    p.pending = false;
    return {};
}

result<void> launch_timer::end(void* stream) {
    CUDA_TRY(cudaEventRecord(impl_->end, static_cast<cudaStream_t>(stream)));
    impl_->pending = true;
    return {};
}

std::optional<host_span> launch_timer::read() {
    auto& p = *impl_;
    if (!p.pending || cudaEventQuery(p.end) != cudaSuccess) return std::nullopt;
    p.pending = false;
    bool ok = true;
    const host_span span{p.at(p.begin, ok), p.at(p.end, ok)};
    if (!ok) return std::nullopt;
    return span;
}

}  // namespace megatts

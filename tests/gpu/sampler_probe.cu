#include "tests/gpu/sampler_probe.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/megakernel/sampling.cuh"
#include "kernels/vocoder/device_memory.h"

namespace megatts::test {
namespace {

// A row a block, as the frame kernel gives each session's draw to one block.
__global__ void __launch_bounds__(mk::k_sampling_threads)
    sample_rows(const float* logits, int n, mk::sampling_desc desc, const float* uniforms, std::int32_t* tokens) {
    __shared__ mk::sampling_smem s;
    const int token = mk::sample_token(s, logits + static_cast<std::size_t>(blockIdx.x) * n, n, desc, nullptr,
                                       uniforms[blockIdx.x]);
    if (threadIdx.x == 0) tokens[blockIdx.x] = token;
}

}  // namespace

result<std::vector<std::int32_t>> sample_on_device(std::span<const float> logits, int rows, int n,
                                                   const ref::sampling_params& p, std::span<const float> uniforms) {
    if (rows < 1 || n < 1 || n > mk::k_max_vocab || logits.size() != static_cast<std::size_t>(rows) * n ||
        uniforms.size() != static_cast<std::size_t>(rows) ||
        (!p.greedy && (p.top_k < 1 || p.top_k > mk::k_max_top_k)))
        return make_error(error_kind::invalid_input, "sample_on_device: logits, uniforms or top_k out of its contract");
    voc::device_memory mem;
    auto d_logits = mem.copy(logits.data(), logits.size_bytes());
    if (!d_logits) return d_logits.err();
    auto d_uniforms = mem.copy(uniforms.data(), uniforms.size_bytes());
    if (!d_uniforms) return d_uniforms.err();
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(rows));
    auto d_tokens = mem.raw(tokens.size() * sizeof(std::int32_t));
    if (!d_tokens) return d_tokens.err();
    const mk::sampling_desc desc{p.greedy, p.temperature, p.top_k, p.top_p};
    sample_rows<<<rows, mk::k_sampling_threads>>>(static_cast<const float*>(*d_logits), n, desc,
                                                  static_cast<const float*>(*d_uniforms),
                                                  static_cast<std::int32_t*>(*d_tokens));
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(tokens.data(), *d_tokens, tokens.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
    return tokens;
}

}  // namespace megatts::test

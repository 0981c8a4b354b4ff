// The one translation unit that instantiates the vocoder's kernels: conv_gemm for
// each gemm_shape, and the small kernels; launch_op() turns a vocoder_op into a
// launch with or without programmatic dependent launch.
#include <algorithm>
#include <type_traits>

#include "kernels/vocoder/codebook_gather.cuh"
#include "kernels/vocoder/conv_gemm.cuh"
#include "kernels/vocoder/conv_implicit.cuh"
#include "kernels/vocoder/convnext_norm.cuh"
#include "kernels/vocoder/frame_stack.cuh"
#include "kernels/vocoder/output_conv.cuh"
#include "kernels/vocoder/sliding_attention.cuh"
#include "kernels/vocoder/vocoder_ops.h"

namespace megatts::voc {
namespace {

// <BM, BN, warps along M, warps along N, pipeline stages, blocks per SM to fit>.
// Warps own whole rows of the tile where the tile has rows for each (16 x 64, 32 x 32):
// a warp splits its A fragments for bf16x3 itself, so warps side by side in N would
// split the same ones twice, while W arrives split (16 x 16 for the skinny one).
// The 16-row tile streams weights (few rows, split K): six stages, so that a launch asks
// for more of them before its dependency wait (programmatic launch). An H200 at B = 1: the
// call 0.788 -> 0.765 ms, B = 64 -0.7%, B = 4 +0.3% (within the runs' spread); Nsight
// Compute, which runs each launch alone, saw none (presumably they pay in the overlap). Eight
// stages (two blocks an SM) were slower everywhere but B = 1 (B = 64 +3.4%).
using tile_m16_n64 = gemm_tile<16, 64, 1, 4, 6, 3>;
using tile_m64_n64 = gemm_tile<64, 64, 4, 1, 3, 3>;
using tile_m128_n64 = gemm_tile<128, 64, 8, 1, 3, 2>;
using tile_m128_n32 = gemm_tile<128, 32, 4, 1, 3, 3>;
using tile_m128_n96 = gemm_tile<128, 96, 8, 1, 3, 2>;

template <class T>
constexpr gemm_shape_info info_of() {
    return {T::bm, T::bn, T::threads, T::smem_bytes};
}

template <class F>
auto with_tile(gemm_shape shape, F&& f) {
    switch (shape) {
    case gemm_shape::m16_n64: return f(tile_m16_n64{});
    case gemm_shape::m64_n64: return f(tile_m64_n64{});
    case gemm_shape::m128_n64: return f(tile_m128_n64{});
    case gemm_shape::m128_n96: return f(tile_m128_n96{});
    case gemm_shape::m128_n32: break;
    }
    return f(tile_m128_n32{});
}

// A launch's configuration and the attributes it points to: programmatic dependent launch
// when asked, and with `cluster_z` > 1 the grid in clusters of 1 x 1 x cluster_z blocks.
// Not copyable: `config` points into the object.
struct launch_config {
    cudaLaunchAttribute attributes[2]{};
    cudaLaunchConfig_t config{};

    launch_config(dim3 grid, int threads, int smem, cudaStream_t stream, bool programmatic, int cluster_z) {
        unsigned int count = 0;
        if (programmatic) {
            attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attributes[count++].val.programmaticStreamSerializationAllowed = 1;
        }
        if (cluster_z > 1) {
            attributes[count].id = cudaLaunchAttributeClusterDimension;
            attributes[count++].val.clusterDim = {1, 1, static_cast<unsigned int>(cluster_z)};
        }
        config.gridDim = grid;
        config.blockDim = dim3(static_cast<unsigned>(threads));
        config.dynamicSmemBytes = static_cast<std::size_t>(smem);
        config.stream = stream;
        config.attrs = attributes;
        config.numAttrs = count;
    }
    launch_config(const launch_config&) = delete;
    launch_config& operator=(const launch_config&) = delete;
};

template <class Params>
cudaError_t launch(void (*kernel)(Params), dim3 grid, int threads, int smem, cudaStream_t stream, bool programmatic,
                   const Params& p, int cluster_z = 1) {
    const launch_config c(grid, threads, smem, stream, programmatic, cluster_z);
    return cudaLaunchKernelEx(&c.config, kernel, p);
}

// The shapes with an implicit conv (conv_implicit.cuh): tiles of 64 rows or more.
template <class T>
constexpr bool has_implicit = T::bm >= 64;

// The implicit conv's tile for a shape: warps of 16 rows across the whole tile width, so
// that on sm_90a each 4 warps are a warpgroup whose wgmma steps (wgmma.cuh) cover 64 rows
// of the tile; other GPUs run the same tiles with mma.sync. Five stages of weights, which
// the producer warp fills up to five steps ahead of the tile's warps (conv_implicit.cuh):
// with four or six an H100 took 4.23 and 4.25 ms a call at B = 64 against five's 4.02.
template <class T>
using implicit_tile = gemm_tile<T::bm, T::bn, T::bm / 16, 1, 5, T::bn == 32 ? 2 : T::min_blocks>;

// The kernel a product runs, and its threads: the implicit conv where it stages rows.
struct gemm_kernel {
    void (*fn)(gemm_params);
    int threads;
};

gemm_kernel kernel_of(const gemm_op& op) {
    return with_tile(op.shape, [&](auto tile) {
        using T = decltype(tile);
        if constexpr (has_implicit<T>)
            if (op.params.a.staged_rows > 0)
                return gemm_kernel{op.params.b.w_tf32 ? conv_implicit_kernel<implicit_tile<T>, true>
                                                      : conv_implicit_kernel<implicit_tile<T>, false>,
                                   implicit_threads<implicit_tile<T>>};
        if constexpr (has_cluster_sum<T>)
            if (op.params.cluster_sum) return gemm_kernel{conv_gemm_kernel<T, split_sums::cluster>, T::threads};
        return gemm_kernel{conv_gemm_kernel<T, split_sums::workspace>, T::threads};
    });
}

// Split K's clusters of up to k_max_cluster_splits blocks, above the portable 8. A device
// that refuses them keeps the portable sizes (resident_clusters() then finds no cluster of
// a larger size and those splits go through the workspace): not an error.
template <class T>
void allow_large_clusters() {
    if (cudaFuncSetAttribute(conv_gemm_kernel<T, split_sums::cluster>, cudaFuncAttributeNonPortableClusterSizeAllowed,
                             1) != cudaSuccess)
        (void)cudaGetLastError();
    if constexpr (has_implicit<T>)
        for (auto* kernel : {conv_implicit_kernel<implicit_tile<T>, false>, conv_implicit_kernel<implicit_tile<T>, true>})
            if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
                (void)cudaGetLastError();
}

}  // namespace

gemm_shape_info gemm_shape_of(gemm_shape shape) {
    return with_tile(shape, [](auto tile) { return info_of<decltype(tile)>(); });
}

int implicit_smem_bytes(gemm_shape shape, int staged_rows) {
    return with_tile(shape, [&](auto tile) {
        using T = decltype(tile);
        if constexpr (has_implicit<T>)
            return implicit_layout<implicit_tile<T>>::smem_bytes(staged_rows);
        else
            return 0;
    });
}

cudaError_t prepare_vocoder_kernels(int& stack_smem, int& implicit_smem) {
    stack_smem = implicit_smem = 0;
    int device = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess) return e;
    // The implicit kernels' static shared memory is finish_tile's flag and the stages'
    // barriers: under 100 bytes.
    const int implicit_limit = std::min(k_implicit_smem_bytes, optin - 1024);
    for (gemm_shape s : {gemm_shape::m16_n64, gemm_shape::m64_n64, gemm_shape::m128_n64, gemm_shape::m128_n32,
                         gemm_shape::m128_n96}) {
        e = with_tile(s, [&](auto tile) {
            using T = decltype(tile);
            cudaError_t r = cudaFuncSetAttribute(conv_gemm_kernel<T, split_sums::workspace>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, T::smem_bytes);
            if constexpr (has_implicit<T>)
                for (auto* kernel :
                     {conv_implicit_kernel<implicit_tile<T>, false>, conv_implicit_kernel<implicit_tile<T>, true>})
                    if (r == cudaSuccess)
                        r = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, implicit_limit);
            if constexpr (has_cluster_sum<T>) {
                if (r == cudaSuccess)
                    r = cudaFuncSetAttribute(conv_gemm_kernel<T, split_sums::cluster>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, T::smem_bytes);
                if (r == cudaSuccess) allow_large_clusters<T>();
            }
            return r;
        });
        if (e != cudaSuccess) return e;
    }
    implicit_smem = implicit_limit;
    cudaFuncAttributes attributes{};
    e = cudaFuncGetAttributes(&attributes, frame_stack_kernel);
    if (e != cudaSuccess) return e;
    const int limit = std::min(k_stack_smem_bytes, optin - static_cast<int>(attributes.sharedSizeBytes));
    if (limit <= 0) return cudaSuccess;
    e = cudaFuncSetAttribute(frame_stack_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
    int blocks = 0;
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, frame_stack_kernel, k_stack_threads, limit);
    if (e == cudaSuccess && blocks >= 1) stack_smem = limit;
    return e;
}

int resident_clusters(const gemm_op& op, int cluster_z) {
    gemm_op clustered = op;  // the kernel it would run in clusters (split_sums)
    clustered.params.cluster_sum = 1;
    const gemm_kernel k = kernel_of(clustered);
    const launch_config c(op.grid, k.threads, op.smem_bytes, nullptr, false, cluster_z);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, k.fn, &c.config) == cudaSuccess) return clusters;
    (void)cudaGetLastError();  // a cluster size this device does not have: not an error to keep
    return 0;
}

cudaError_t launch_op(const vocoder_op& op, cudaStream_t stream, bool programmatic) {
    return std::visit(
        [&](const auto& o) -> cudaError_t {
            using O = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<O, gemm_op>) {
                const gemm_kernel k = kernel_of(o);
                return launch(k.fn, o.grid, k.threads, o.smem_bytes, stream, programmatic, o.params,
                              o.params.cluster_sum ? o.params.splits : 1);
            } else if constexpr (std::is_same_v<O, gather_op>) {
                return launch(codebook_gather_kernel, o.grid, k_gather_threads, 0, stream, programmatic, o.params);
            } else if constexpr (std::is_same_v<O, attention_op>) {
                return launch(sliding_attention_kernel, o.grid, k_attention_threads, o.smem_bytes, stream,
                              programmatic, o.params);
            } else if constexpr (std::is_same_v<O, stack_op>) {
                return launch(frame_stack_kernel, o.grid, k_stack_threads, o.smem_bytes, stream, programmatic,
                              *o.params);
            } else if constexpr (std::is_same_v<O, norm_op>) {
                return launch(convnext_norm_kernel, o.grid, k_norm_threads,
                              o.params.channels * static_cast<int>(sizeof(float)), stream, programmatic, o.params);
            } else {
                return launch(output_conv_kernel, o.grid, k_output_threads,
                              output_conv_smem_floats(o.params.channels, o.params.taps) *
                                  static_cast<int>(sizeof(float)),
                              stream, programmatic, o.params);
            }
        },
        op);
}

}  // namespace megatts::voc

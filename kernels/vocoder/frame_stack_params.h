// frame_stack_params: what one launch of frame_stack_kernel (frame_stack.cuh) runs: the
// vocoder's frame-rate transformer (input projection, every layer's products and
// attention, output projection) for a small batch, as a list of steps, each the
// gemm_params or attention_params its own kernel would have been launched with.
//
// Contract: POD, filled on the host (vocoder_program), passed by value as one
// __grid_constant__ parameter (under the 32 KB a kernel parameter may take). A product
// step may run in the stack only if stack_columns() gives it a tile width: its A is one
// flat row per item (no taps), 16-byte aligned rows, K a multiple of 4, N a multiple of
// the width, and each thread's share of a tile's weights fits k_stack_max_loads float4s.
// `barrier` is two counters, 0 before the first launch: the kernel leaves them at 0.
#pragma once

#include "kernels/vocoder/gemm_params.h"
#include "kernels/vocoder/kernel_params.h"

namespace megatts::voc {

inline constexpr int k_stack_threads = 256;
inline constexpr int k_stack_warps = k_stack_threads / 32;
inline constexpr int k_stack_max_items = 16;  // calls of up to this many items use the stack
inline constexpr int k_stack_rows = 4;        // activation rows per pass over a tile's weights
inline constexpr int k_stack_max_columns = 32;
inline constexpr int k_stack_max_loads = 16;  // weight float4s a thread holds for one tile
inline constexpr int k_stack_max_k = 1024;
inline constexpr int k_stack_max_products = 48;
inline constexpr int k_stack_max_attentions = 12;
inline constexpr int k_stack_max_steps = k_stack_max_products + k_stack_max_attentions;
inline constexpr int k_stack_smem_bytes = 100 * 1024;  // the launch's dynamic shared memory at most

enum class stack_step_kind : int { product, attention };

struct stack_step {
    stack_step_kind kind;
    int index;    // into products or attentions
    int columns;  // a product's tile width: 4, 8, 16 or 32 output columns
    // 1: a product whose residual the step before does not write, so that the block may
    // read it before the barrier that ends that step (frame_stack.cuh's epilogue_ahead).
    int residual_ahead;
};

struct frame_stack_params {
    const batch_desc* batch;
    unsigned int* barrier;  // [2]: phase arrivals, blocks done
    int n_steps;
    stack_step steps[k_stack_max_steps];
    gemm_params products[k_stack_max_products];
    attention_params attentions[k_stack_max_attentions];
};

static_assert(sizeof(frame_stack_params) <= 32764, "a kernel parameter holds at most 32764 bytes");

// The tile width of a product on `sms` multiprocessors: the narrowest (so the most tiles)
// that leaves no more tiles than multiprocessors, or 0 when the product cannot run here.
__host__ __device__ inline int stack_columns(const gemm_params& g, int sms) {
    if (g.rows_per_frame != 1 || g.a.taps != 1 || !g.a.vec || g.b.K % 4 != 0 || g.b.K > k_stack_max_k ||
        g.epi.phases != 1)
        return 0;
    int columns = 4;
    while (g.b.N / columns > sms && columns < k_stack_max_columns) columns *= 2;
    const int k_lanes = k_stack_threads / (columns / 4);
    if (g.b.N % columns != 0 || (g.b.K + k_lanes - 1) / k_lanes > k_stack_max_loads) return 0;
    return columns;
}

// Dynamic shared memory of a launch for calls of up to `items` items: the larger of a
// product's (its tile's partial sums, the rows' 1/rms, the staged rows) and an attention's.
__host__ __device__ constexpr int stack_smem_floats(int items, int max_k, int window, int head_dim) {
    const int rows = (items + k_stack_rows - 1) / k_stack_rows * k_stack_rows;
    const int product = k_stack_warps * k_stack_rows * k_stack_max_columns + k_stack_max_items + rows * max_k;
    const int attention = attention_smem_floats(window, head_dim);
    return product > attention ? product : attention;
}

}  // namespace megatts::voc

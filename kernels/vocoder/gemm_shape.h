// gemm_shape: the tile shapes conv_gemm is compiled for (and conv_implicit, for the
// shapes of 64 rows or more), as the host sees them. The program picks one per layer and
// batch bucket from the rows it has (M) and its output width (N); vocoder_kernels.cu
// holds the matching instantiations.
//
// Contract: gemm_shape_of() is the shape's block tile, threads and dynamic shared
// memory, implicit_smem_bytes() the implicit conv's; both are defined next to the
// instantiations, so the two cannot disagree.
#pragma once

namespace megatts::voc {

// K advances 32 at a time; weights are zero-padded to whole steps and to a multiple
// of 64 in N, so that no tile of 32 or 64 columns ever reads past them; tiles of 96
// columns are used only where N is a multiple of 96.
inline constexpr int k_gemm_k_step = 32;
inline constexpr int k_gemm_n_align = 64;
// Taps of a conv's product: each block keeps every (row, tap)'s source offset (the 12 Hz
// decoder's residual convs have 7).
inline constexpr int k_max_gemm_taps = 8;

enum class gemm_shape : int {
    m16_n64,   // a few rows (frame-rate layers of small batches): weight streaming, split K
    m64_n64,
    m128_n64,  // many rows (the decoder blocks): tensor-core bound
    m128_n32,  // many rows, N not a multiple of 64 (96, 288 at full size), too few for 64-column tiles
    m128_n96,  // many rows, N a multiple of 96 but not of 64 (96, 288), enough for 96-column tiles
};


struct gemm_shape_info {
    int bm, bn, threads, smem_bytes;
};

gemm_shape_info gemm_shape_of(gemm_shape shape);

// The dynamic shared memory of conv_implicit.cuh's kernel for this shape, staging at
// most `staged_rows` rows a tile; 0 where the shape has no implicit instantiation.
int implicit_smem_bytes(gemm_shape shape, int staged_rows);

}  // namespace megatts::voc

// slot_order: which of each 16 k the vocoder's bf16 tensor-core products carry in k slot
// `slot` of an m16n8k16 (or wgmma k16) step. A lane (g, t) holds slots 2t, 2t + 1, 2t + 8,
// 2t + 9 of its rows; with k = t, t + 4, t + 8, t + 12 there, conv_gemm reads its f32 A
// rows from shared memory with the lanes of a warp on 32 distinct banks. W's layouts
// (device_weights.cu) and conv_implicit's bf16 planes put each k at its slot.
//
// Contract: pure; a permutation of 0..15 (a dot product may add its terms in any order
// as long as A and B agree on it).
#pragma once

#include "kernels/common/host_device.h"

namespace megatts::voc {

MEGATTS_HD constexpr int slot_k(int slot) { return (slot % 8) / 2 + 4 * (slot % 2) + 8 * (slot / 8); }

}  // namespace megatts::voc

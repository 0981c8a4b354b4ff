// implicit_pipeline: how long conv_implicit.cuh's cp.async groups may stay in flight. Its
// prologue issues the first `ahead` steps' weights and the first chunk's rows, then commits
// `ahead` groups (all of it in the first); step s waits until at most ahead - 1 groups are
// pending (its weights, issued `ahead` steps before, have landed), issues at a chunk's first
// tap the next chunk's rows, then the weights of step s + ahead, and commits one group. A
// chunk's rows were therefore issued `taps` steps before its first tap, and that wait covers
// them only where taps >= ahead; with fewer taps the chunk's first tap waits until at most
// implicit_chunk_pending() groups are pending.
//
// Contract: pure; callable from host and device code (tests/kernels/vocoder checks it against
// a model of the kernel's groups on the CPU). taps >= 1, ahead >= 1.
#pragma once

#include "kernels/common/host_device.h"

namespace megatts::voc {

// The most cp.async groups that may be pending at a chunk's first tap so that the chunk's
// rows, issued `taps` steps (commits) before, have landed.
MEGATTS_HD constexpr int implicit_chunk_pending(int taps, int ahead) { return (taps < ahead ? taps : ahead) - 1; }

}  // namespace megatts::voc

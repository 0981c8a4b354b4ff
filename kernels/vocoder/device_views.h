// device_views: the plain structs every vocoder kernel reads: which sessions a call
// decodes (batch_desc) and where an activation tensor lives (act_view).
//
// Contract: POD, identical on host and device; the host fills them (vocoder_program)
// and kernels take them by value or read batch_desc from device memory. Rows: a
// kernel of a stage that makes `n` rows per frame (1 at the frame rate, 1920 at the
// output) works on batch rows m = item * n + r, r < n, and the rows of item i are its
// session's times t = items[i].frame * n + r.
//
// Two kinds of tensor. A flat tensor holds one call's rows, row m at data + m * width.
// A ring holds a session's recent rows in its slot: time t at data + slot *
// slot_stride + (t mod ring_rows) * width. Rings are what give the causal convs and
// the attention their left context across calls: ring_rows is the history a consumer
// reads plus the rows one frame writes, so a frame's writes never overwrite history
// that is still to be read. Times before 0 are the zero left padding and are never
// read from memory (view_addressing.cuh masks them), which is why admitting a slot
// only resets its frame counter: what an earlier session left in the ring is
// unreachable.
#pragma once

#include <cstdint>

namespace megatts::voc {

inline constexpr int k_max_batch = 128;  // items per call (the megakernel's session limit)
inline constexpr int k_max_codebooks = 16;

struct item_desc {
    int slot;
    int frame;  // frames the slot decoded before this one
    std::int32_t codes[k_max_codebooks];
};

struct batch_desc {
    int n_items;
    int pad_[3];
    item_desc items[k_max_batch];
};

struct act_view {
    float* data;
    long slot_stride;  // ring: floats between two slots' rings
    int width;         // floats per row
    int ring_rows;     // 0: flat
};

}  // namespace megatts::voc

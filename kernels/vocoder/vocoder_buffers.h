// vocoder_buffers: every tensor of the batched vocoder on the device: the sessions'
// state as rings in their slots (device_views.h), and one call's scratch as flat
// tensors sized for the largest batch.
//
// Contract: allocate_buffers() sizes everything from the uploaded weights' shapes,
// for `slots` sessions and calls of up to `max_batch` items, in `memory` (which must
// outlive the views). A ring holds the history its consumer reads (taps - 1 rows
// times the dilation; window - 1 positions for the keys and values) plus one frame's
// rows. Contents start zeroed but nothing relies on it: times before a session's
// start are never read. Errors: invalid_input for an odd tensor width (the kernels
// store pairs) or a tensor of 2^33 floats or more (conv_gemm's 32-bit offsets),
// unavailable when device memory runs out. Host code, engine thread.
#pragma once

#include <array>
#include <cstddef>

#include "kernels/common/result.h"
#include "kernels/vocoder/device_memory.h"
#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/device_weights.h"

namespace megatts::voc {

// Rows per frame at each point of the decoder.
struct stage_rows {
    std::array<int, 2> upsample_in{}, upsample_out{};
    std::array<int, 4> block_in{}, block_out{};
    int samples = 0;  // block_out[3]: samples per frame
};

stage_rows rows_of(const device_weights& w);

struct vocoder_buffers {
    stage_rows rows;
    // Rings, per slot.
    act_view codes_proj;                              // dequantiser output = pre_conv input
    act_view keys, values;                            // [slot][layer][window][kv_width]
    std::array<act_view, 2> up_raw;                   // each upsampler's ConvTranspose output
    act_view decoder0_in;                             // upsample.1 output
    std::array<act_view, 4> block_in;                 // SnakeBeta'd input of each decoder block
    std::array<std::array<act_view, 3>, 4> unit_in;   // act1-SnakeBeta'd input of each residual unit
    act_view final_in;                                // SnakeBeta'd input of the output conv
    // Flat, per call.
    act_view gathered, pre_out, h, q, ctx, mlp, pt_out, up_norm, up_hidden, up0_out;
    // Shared by the decoder blocks in turn, so their width is set where they are used.
    std::array<act_view, 3> unit_raw;  // a block's residual stream: ConvTranspose output, unit 0, unit 1 outputs
    act_view unit_hidden;              // act2-SnakeBeta'd conv1 output of a unit
    act_view audio;                    // [items][samples]
    batch_desc* batch = nullptr;
    std::size_t state_bytes_per_slot = 0;

    act_view layer_keys(int layer, int window, int kv_width) const;
    act_view layer_values(int layer, int window, int kv_width) const;
};

result<vocoder_buffers> allocate_buffers(const device_weights& w, int slots, int max_batch, device_memory& memory);

}  // namespace megatts::voc

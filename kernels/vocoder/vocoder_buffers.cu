#include "kernels/vocoder/vocoder_buffers.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

namespace megatts::voc {

stage_rows rows_of(const device_weights& w) {
    stage_rows r;
    int n = 1;
    for (std::size_t k = 0; k < w.upsamplers.size(); ++k) {
        r.upsample_in[k] = n;
        n *= w.upsamplers[k].ratio;
        r.upsample_out[k] = n;
    }
    for (std::size_t b = 0; b < w.blocks.size(); ++b) {
        r.block_in[b] = n;
        n *= w.blocks[b].rate;
        r.block_out[b] = n;
    }
    r.samples = n;
    return r;
}

act_view vocoder_buffers::layer_keys(int layer, int window, int kv_width) const {
    act_view v = keys;
    v.data += static_cast<long>(layer) * window * kv_width;
    return v;
}

act_view vocoder_buffers::layer_values(int layer, int window, int kv_width) const {
    act_view v = values;
    v.data += static_cast<long>(layer) * window * kv_width;
    return v;
}

namespace {

class allocator {
public:
    allocator(device_memory& memory, int slots, int max_batch) : memory_(memory), slots_(slots), batch_(max_batch) {}

    const error* failed() const { return error_ ? &*error_ : nullptr; }
    std::size_t ring_floats_per_slot() const { return ring_floats_; }

    // A ring of `history` rows before one frame's `rows`.
    act_view ring(int width, int history, int rows) {
        const int ring_rows = history + rows;
        const long stride = static_cast<long>(ring_rows) * width;
        ring_floats_ += static_cast<std::size_t>(stride);
        return {alloc(width, static_cast<std::size_t>(slots_) * stride), stride, width, ring_rows};
    }

    act_view flat(int width, int rows_per_item) {
        return {alloc(width, static_cast<std::size_t>(batch_) * rows_per_item * width), 0, width, 0};
    }

    // Storage for tensors whose width varies by use (vocoder_program sets it): the
    // residual stream of each decoder block in turn.
    act_view per_item(int floats_per_item) { return {alloc(2, static_cast<std::size_t>(batch_) * floats_per_item), 0, 0, 0}; }

    // The keys or values of every layer: one ring of `window` positions per layer.
    act_view layered_ring(int width, int window, int layers) {
        const long stride = static_cast<long>(layers) * window * width;
        ring_floats_ += static_cast<std::size_t>(stride);
        return {alloc(width, static_cast<std::size_t>(slots_) * stride), stride, width, window};
    }

private:
    float* alloc(int width, std::size_t floats) {
        if (error_) return nullptr;
        if (width % 2 != 0) {
            error_ = make_error(error_kind::invalid_input,
                                "cuda vocoder: a tensor " + std::to_string(width) + " wide (the kernels need even widths)");
            return nullptr;
        }
        // conv_gemm keeps a block's source offsets as 32-bit counts of float4s.
        if (floats / 4 > static_cast<std::size_t>(INT_MAX)) {
            error_ = make_error(error_kind::invalid_input, "cuda vocoder: a tensor of " + std::to_string(floats) +
                                                               " floats (at most 2^33: fewer slots or a smaller batch)");
            return nullptr;
        }
        auto p = memory_.zeros(floats);
        if (!p) {
            error_ = p.err();
            return nullptr;
        }
        return *p;
    }

    device_memory& memory_;
    int slots_, batch_;
    std::size_t ring_floats_ = 0;
    std::optional<error> error_;
};

}  // namespace

result<vocoder_buffers> allocate_buffers(const device_weights& w, int slots, int max_batch, device_memory& memory) {
    const auto& t = w.dims.transformer;
    vocoder_buffers b;
    b.rows = rows_of(w);
    const auto& r = b.rows;
    allocator a(memory, slots, max_batch);

    b.codes_proj = a.ring(w.pre_conv.in, w.pre_conv.taps - 1, 1);
    b.keys = a.layered_ring(t.kv_width(), w.dims.sliding_window, t.layers);
    b.values = a.layered_ring(t.kv_width(), w.dims.sliding_window, t.layers);
    for (std::size_t k = 0; k < w.upsamplers.size(); ++k) {
        const auto& u = w.upsamplers[k];
        b.up_raw[k] = a.ring(u.up.N / u.ratio, u.dw_taps - 1, r.upsample_out[k]);
    }
    b.decoder0_in = a.ring(w.decoder0.in, (w.decoder0.taps - 1), r.upsample_out[1]);
    int unit_rows = 0;
    for (std::size_t i = 0; i < w.blocks.size(); ++i) {
        const auto& blk = w.blocks[i];
        b.block_in[i] = a.ring(blk.up.in, blk.up.taps - 1, r.block_in[i]);
        for (std::size_t u = 0; u < blk.units.size(); ++u) {
            const auto& unit = blk.units[u];
            b.unit_in[i][u] = a.ring(unit.conv1.in, (unit.conv1.taps - 1) * unit.dilation, r.block_out[i]);
        }
        unit_rows = std::max(unit_rows, r.block_out[i] * blk.units[0].conv1.in);
    }
    const int final_channels = w.blocks.back().units.back().conv2.N;
    b.final_in = a.ring(final_channels, w.final_taps - 1, r.samples);

    b.gathered = a.flat(w.dequant.in, 1);
    b.pre_out = a.flat(w.pre_conv.N, 1);
    b.h = a.flat(t.hidden, 1);
    b.q = a.flat(t.q_width(), 1);
    b.ctx = a.flat(t.q_width(), 1);
    b.mlp = a.flat(w.layers.front().down.in, 1);
    b.pt_out = a.flat(w.output_proj.N, 1);
    const int latent = w.output_proj.N;
    b.up_norm = a.flat(latent, r.upsample_out[1]);
    b.up_hidden = a.flat(w.upsamplers[0].pw1.N, r.upsample_out[1]);
    b.up0_out = a.flat(latent, r.upsample_out[0]);
    // The unit tensors of every block share storage; rows * channels is what varies.
    for (auto& u : b.unit_raw) u = a.per_item(unit_rows);
    b.unit_hidden = a.per_item(unit_rows);
    b.audio = a.flat(r.samples, 1);
    if (const error* e = a.failed()) return *e;
    auto desc = memory.raw(sizeof(batch_desc));
    if (!desc) return desc.err();
    b.batch = static_cast<batch_desc*>(*desc);
    b.state_bytes_per_slot = a.ring_floats_per_slot() * sizeof(float);
    return b;
}

}  // namespace megatts::voc

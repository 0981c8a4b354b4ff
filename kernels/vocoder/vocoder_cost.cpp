#include "kernels/vocoder/vocoder_cost.h"

#include "kernels/reference/vocoder/decoder_block.h"
#include "kernels/reference/vocoder/vocoder_stage.h"

namespace megatts {
namespace {

constexpr double k_float = 4.0;

double floats(const ref::dense_weights& d) { return static_cast<double>(d.weight.size() + d.bias.size()); }
double floats(const ref::snake_weights& s) { return static_cast<double>(s.alpha.size() + s.inv_beta.size()); }
double floats(const std::vector<float>& v) { return static_cast<double>(v.size()); }

class counter {
public:
    vocoder_cost cost;

    void stage(ref::vocoder_stage s, int index) { cost.stages.push_back({ref::vocoder_stage_name(s, index), 0, 0}); }

    void weights(double n) { cost.stages.back().weight_bytes += k_float * n; }

    // A matrix layer with `rows` rows of A per frame (a transposed conv's input rows):
    // its arithmetic and weights, A read once, `outputs` values per output column
    // written (2: a raw and a SnakeBeta'd copy), `extra_reads` more values per output
    // column read (a residual), and `history` earlier rows of A read from its ring.
    void gemm(const ref::dense_weights& d, int rows, double outputs, double extra_reads, int history) {
        gemm_weights(d, rows, outputs, extra_reads, history, floats(d));
    }

    // A transposed conv's phases repeat its bias once per phase; the checkpoint's
    // tensor (and the bytes that matter) has it once.
    void transposed(const ref::transposed_conv_weights& t, int rows, double outputs, int history) {
        const double bias = static_cast<double>(t.phases.bias.size()) / t.stride;
        gemm_weights(t.phases, rows, outputs, 0, history, static_cast<double>(t.phases.weight.size()) + bias);
    }

    void gemm_weights(const ref::dense_weights& d, int rows, double outputs, double extra_reads, int history,
                      double weight_floats) {
        cost.stages.back().flops += 2.0 * rows * static_cast<double>(d.weight.size());
        weights(weight_floats);
        const double in = d.in, out = d.out;
        cost.activation_bytes += k_float * rows * (in + out * (outputs + extra_reads));
        cost.state_bytes += k_float * history * in;
    }

    void attention(const transformer_dims& t, int window) {
        cost.stages.back().flops += 2.0 * 2.0 * t.heads * t.head_dim * window;
        cost.state_bytes += k_float * 2.0 * window * t.kv_width();
        cost.activation_bytes += k_float * 2.0 * t.q_width();  // q read, ctx written
    }
};

}  // namespace

vocoder_cost count_vocoder_cost(const ref::vocoder_weights& w) {
    using st = ref::vocoder_stage;
    const auto& d = w.dims;
    const auto& t = d.transformer;
    counter c;

    c.stage(st::dequant, 0);
    c.cost.state_bytes += k_float * d.num_quantizers * d.codebook_vector_dim();  // the gathered rows
    c.gemm(w.dequant_proj, 1, 1, 0, 0);
    c.stage(st::pre_conv, 0);
    c.gemm(w.pre_conv, 1, 1, 0, w.pre_conv.taps - 1);

    c.stage(st::pre_transformer, 0);
    const auto& pt = w.pre_transformer;
    c.gemm(pt.input_proj, 1, 1, 0, 0);
    for (const auto& l : pt.layers) {
        c.weights(floats(l.input_norm) + floats(l.post_norm) + floats(l.attn_scale) + floats(l.mlp_scale));
        // RMS reads of the residual stream before qkv and gate/up: one more A read each.
        c.gemm(l.q, 1, 1, 0, 0);
        c.gemm(l.k, 1, 1, 0, 0);
        c.gemm(l.v, 1, 1, 0, 0);
        c.cost.activation_bytes += k_float * 2.0 * t.hidden;
        c.attention(t, d.sliding_window);
        c.gemm(l.o, 1, 1, 1, 0);
        c.gemm(l.gate, 1, 0.5, 0, 0);
        c.gemm(l.up, 1, 0.5, 0, 0);
        c.gemm(l.down, 1, 1, 1, 0);
    }
    c.weights(floats(pt.norm));
    c.gemm(pt.output_proj, 1, 1, 0, 0);

    int rows = 1;
    for (std::size_t k = 0; k < w.upsamplers.size(); ++k) {
        const auto& u = w.upsamplers[k];
        c.stage(st::upsample, static_cast<int>(k));
        c.transposed(u.up, rows, 1, u.up.phases.taps - 1);
        rows *= u.up.stride;
        const double channels = static_cast<double>(u.dw_bias.size());
        const int dw_taps = static_cast<int>(u.dw_weight.size() / u.dw_bias.size());
        c.cost.stages.back().flops += 2.0 * rows * static_cast<double>(u.dw_weight.size());
        c.weights(floats(u.dw_weight) + floats(u.dw_bias) + floats(u.norm_weight) + floats(u.norm_bias) +
                  floats(u.gamma));
        c.cost.activation_bytes += k_float * rows * 2.0 * channels;  // the norm's input and output
        c.cost.state_bytes += k_float * (dw_taps - 1) * channels;
        c.gemm(u.pw1, rows, 1, 0, 0);
        c.gemm(u.pw2, rows, 1, 1, 0);
    }

    c.stage(st::decoder0, 0);
    c.gemm(w.decoder0, rows, 1, 0, w.decoder0.taps - 1);
    for (std::size_t b = 0; b < w.blocks.size(); ++b) {
        const auto& blk = w.blocks[b];
        c.stage(st::block, static_cast<int>(b) + 1);
        c.weights(floats(blk.snake));
        c.transposed(blk.up, rows, 2, blk.up.phases.taps - 1);
        rows *= blk.up.stride;
        for (std::size_t u = 0; u < blk.units.size(); ++u) {
            const auto& unit = blk.units[u];
            c.weights(floats(unit.act1) + floats(unit.act2));
            c.gemm(unit.conv1, rows, 1, 0, (unit.conv1.taps - 1) * ref::residual_dilations[u]);
            c.gemm(unit.conv2, rows, u + 1 < blk.units.size() ? 2 : 1, 1, 0);
        }
    }

    c.stage(st::audio, 0);
    c.weights(floats(w.final_snake));
    c.gemm(w.final_conv, rows, 1, 0, w.final_conv.taps - 1);

    for (const auto& s : c.cost.stages) {
        c.cost.flops += s.flops;
        c.cost.weight_bytes += s.weight_bytes;
    }
    return c.cost;
}

}  // namespace megatts

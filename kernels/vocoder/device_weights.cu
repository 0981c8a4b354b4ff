#include "kernels/vocoder/device_weights.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cmath>
#include <optional>
#include <string>

#include "kernels/reference/vocoder/convnext_upsampler.h"
#include "kernels/reference/vocoder/decoder_block.h"
#include "kernels/vocoder/device_memory.h"
#include "kernels/vocoder/device_views.h"
#include "kernels/vocoder/gemm_shape.h"
#include "kernels/vocoder/kernel_params.h"
#include "kernels/vocoder/weight_layouts.h"

namespace megatts::voc {

struct device_weights::owner {
    device_memory memory;
};

namespace {

// A [K][N] row-major matrix on the host, K = taps * in (the reference's layout).
struct host_matrix {
    int K = 0, N = 0;
    std::vector<float> v;
};

host_matrix from_dense(const ref::dense_weights& d) { return {d.taps * d.in, d.out, d.weight}; }

host_matrix concat_columns(const std::vector<const host_matrix*>& parts) {
    host_matrix m{parts.front()->K, 0, {}};
    for (const auto* p : parts) m.N += p->N;
    m.v.resize(static_cast<std::size_t>(m.K) * m.N);
    for (int k = 0; k < m.K; ++k) {
        int col = 0;
        for (const auto* p : parts) {
            std::copy_n(p->v.begin() + static_cast<long>(k) * p->N, p->N, m.v.begin() + static_cast<long>(k) * m.N + col);
            col += p->N;
        }
    }
    return m;
}

// Column j of the result is column order[j] of m.
host_matrix permute_columns(const host_matrix& m, const std::vector<int>& order) {
    host_matrix r{m.K, m.N, std::vector<float>(m.v.size())};
    for (int k = 0; k < m.K; ++k)
        for (int j = 0; j < m.N; ++j)
            r.v[static_cast<std::size_t>(k) * m.N + j] = m.v[static_cast<std::size_t>(k) * m.N + order[j]];
    return r;
}

// RMSNorm(x) W = (1/rms) * x (diag(norm) W): the norm weight scales W's rows.
host_matrix fold_norm(host_matrix m, const std::vector<float>& norm) {
    for (int k = 0; k < m.K; ++k)
        for (int j = 0; j < m.N; ++j) m.v[static_cast<std::size_t>(k) * m.N + j] *= norm[static_cast<std::size_t>(k)];
    return m;
}

// Within each head, columns i and i + head_dim/2 (a RoPE pair) side by side.
std::vector<int> rope_pair_order(int heads, int head_dim) {
    std::vector<int> order(static_cast<std::size_t>(heads) * head_dim);
    const int half = head_dim / 2;
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < half; ++i) {
            order[static_cast<std::size_t>(h * head_dim + 2 * i)] = h * head_dim + i;
            order[static_cast<std::size_t>(h * head_dim + 2 * i + 1)] = h * head_dim + i + half;
        }
    return order;
}

// Over [a | b] of width 2n: a0, b0, a1, b1, ...
std::vector<int> interleave_order(int n) {
    std::vector<int> order(2 * static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
        order[2 * static_cast<std::size_t>(j)] = j;
        order[2 * static_cast<std::size_t>(j) + 1] = n + j;
    }
    return order;
}

class uploader {
public:
    explicit uploader(device_memory& memory) : memory_(memory) {}

    const error* failed() const { return error_ ? &*error_ : nullptr; }

    template <class T>
    const T* vec(const std::vector<T>& v) {
        if (error_ || v.empty()) return nullptr;
        auto p = memory_.copy(v.data(), v.size() * sizeof(T));
        if (!p) {
            error_ = p.err();
            return nullptr;
        }
        return static_cast<const T*>(*p);
    }

    // stack: the frame stack runs this matrix too (it reads the f32 layout); tf32: its
    // implicit products multiply TF32 operands on sm_90a (gemm_matrix::w_tf32).
    gemm_matrix matrix(const host_matrix& m, const std::vector<float>& bias, int taps, int in, bool stack = false,
                       bool tf32 = false) {
        gemm_matrix g;
        g.taps = taps;
        g.in = in;
        g.K = m.K;
        g.N = m.N;
        g.k_steps = (m.K + k_gemm_k_step - 1) / k_gemm_k_step;
        g.n_pad = (m.N + k_gemm_n_align - 1) / k_gemm_n_align * k_gemm_n_align;
        if (m.N % 2 != 0 && !error_)
            error_ = make_error(error_kind::invalid_input,
                                "cuda vocoder: a layer with " + std::to_string(m.N) + " outputs (the kernels need an even count)");
        if (taps > k_max_gemm_taps && !error_)
            error_ = make_error(error_kind::invalid_input, "cuda vocoder: a conv of " + std::to_string(taps) + " taps (at most " +
                                                               std::to_string(k_max_gemm_taps) + ")");
        std::vector<float> padded(static_cast<std::size_t>(g.k_steps) * k_gemm_k_step * g.n_pad, 0.f);
        for (int k = 0; k < m.K; ++k)
            std::copy_n(m.v.begin() + static_cast<long>(k) * m.N, m.N, padded.begin() + static_cast<long>(k) * g.n_pad);
        g.w_split = vec(split_layout<uint4>(padded, g.k_steps, g.n_pad));
        g.w_cores = vec(core_layout<uint4>(padded, g.k_steps, g.n_pad));
        if (tf32) g.w_tf32 = vec(tf32_core_layout<uint4>(padded, g.k_steps, g.n_pad));
        if (stack) g.w = vec(padded);
        g.bias = vec(bias);
        return g;
    }

    gemm_matrix dense(const ref::dense_weights& d, bool stack = false, bool tf32 = false) {
        return matrix(from_dense(d), d.bias, d.taps, d.in, stack, tf32);
    }

    device_snake snake(const ref::snake_weights& s) { return {vec(s.alpha), vec(s.inv_beta)}; }

private:
    device_memory& memory_;
    std::optional<error> error_;
};

device_layer upload_layer(uploader& up, const ref::pre_transformer_layer_weights& l, const transformer_dims& d) {
    const host_matrix q = permute_columns(from_dense(l.q), rope_pair_order(d.heads, d.head_dim));
    const host_matrix k = permute_columns(from_dense(l.k), rope_pair_order(d.kv_heads, d.head_dim));
    const host_matrix v = from_dense(l.v);
    const host_matrix gate = from_dense(l.gate), upm = from_dense(l.up);
    device_layer out;
    constexpr bool stack = true;
    out.qkv = up.matrix(fold_norm(concat_columns({&q, &k, &v}), l.input_norm), {}, 1, d.hidden, stack);
    out.o = up.dense(l.o, stack);
    out.gate_up = up.matrix(fold_norm(permute_columns(concat_columns({&gate, &upm}), interleave_order(gate.N)),
                                      l.post_norm),
                            {}, 1, d.hidden, stack);
    out.down = up.dense(l.down, stack);
    out.attn_scale = up.vec(l.attn_scale);
    out.mlp_scale = up.vec(l.mlp_scale);
    return out;
}

// RoPE frequencies as the reference forms them: 1 / theta^(2i/d) in double, then f32.
std::vector<float> rope_inv_freq(const transformer_dims& d) {
    std::vector<float> f(static_cast<std::size_t>(d.head_dim / 2));
    for (std::size_t i = 0; i < f.size(); ++i)
        f[i] = static_cast<float>(1.0 / std::pow(static_cast<double>(d.rope_theta),
                                                 (2.0 * static_cast<double>(i)) / d.head_dim));
    return f;
}

result<void> check_shapes(const ref::vocoder_weights& w) {
    const auto& d = w.dims;
    const auto& t = d.transformer;
    auto bad = [](const std::string& what) { return make_error(error_kind::invalid_input, "cuda vocoder: " + what); };
    // The kernels multiply the published f32 operands (as three bf16 products, or, in the
    // decoder blocks' 7-tap convs on sm_90a, rounded to TF32 as they go: their own rounding,
    // not the weights'); a layer marked for rounded operands models a product they do not have.
    std::string rounded;
    ref::for_each_dense(w, [&](const std::string& name, const ref::dense_weights& l) {
        if (l.operand_bits < 24 && rounded.empty()) rounded = name + " (" + std::to_string(l.operand_bits) + " bits)";
    });
    if (!rounded.empty()) return bad("operands rounded in " + rounded + ": the kernels multiply f32 operands");
    if (d.num_quantizers < 1 || d.num_quantizers > k_max_codebooks)
        return bad(std::to_string(d.num_quantizers) + " codebooks (1.." + std::to_string(k_max_codebooks) + " supported)");
    if (t.head_dim % 4 != 0 || t.kv_heads < 1 || t.heads % t.kv_heads != 0)
        return bad("attention with head_dim " + std::to_string(t.head_dim) + ", " + std::to_string(t.heads) +
                   " heads and " + std::to_string(t.kv_heads) + " kv heads (head_dim % 4 == 0 and whole groups needed)");
    if (d.sliding_window < 1) return bad("a sliding window of " + std::to_string(d.sliding_window));
    // The attention kernel stages a head's whole window in shared memory, within the
    // 48 KB a launch gets without opting in (the 12 Hz decoder's 72 x 64: 38 KB).
    if (attention_smem_floats(d.sliding_window, t.head_dim) * sizeof(float) > 47 * 1024)
        return bad("a sliding window of " + std::to_string(d.sliding_window) + " keys of " +
                   std::to_string(t.head_dim) + " floats (the attention stages the window in 47 KB)");
    if (w.final_conv.out != 1) return bad("an output conv with " + std::to_string(w.final_conv.out) + " channels");
    for (const auto& u : w.upsamplers) {
        if (u.up.channels_out() % 2 != 0) return bad("an odd upsampler width");
        if (u.dw_weight.size() > static_cast<std::size_t>(k_max_norm_taps) * u.dw_bias.size())
            return bad("a ConvNeXt depthwise conv of more than " + std::to_string(k_max_norm_taps) + " taps");
    }
    for (const auto& b : w.blocks)
        if (b.up.channels_out() % 2 != 0) return bad("a decoder block with an odd channel count");
    return {};
}

}  // namespace

result<device_weights> upload_weights(const ref::vocoder_weights& w, bool tf32_convs) {
    MEGATTS_TRY(check_shapes(w));
    device_weights out;
    out.dims = w.dims;
    out.memory = std::make_shared<device_weights::owner>();
    uploader up(out.memory->memory);

    out.codebooks = up.vec(w.codebooks);
    out.dequant = up.dense(w.dequant_proj);
    out.pre_conv = up.dense(w.pre_conv);
    const auto& pt = w.pre_transformer;
    constexpr bool stack = true;
    out.input_proj = up.dense(pt.input_proj, stack);
    for (const auto& l : pt.layers) out.layers.push_back(upload_layer(up, l, w.dims.transformer));
    out.output_proj = up.matrix(fold_norm(from_dense(pt.output_proj), pt.norm), pt.output_proj.bias, 1,
                                pt.output_proj.in, stack);
    out.inv_freq = up.vec(rope_inv_freq(w.dims.transformer));
    for (std::size_t k = 0; k < w.upsamplers.size(); ++k) {
        const auto& u = w.upsamplers[k];
        auto& o = out.upsamplers[k];
        o.ratio = u.up.stride;
        o.up = up.dense(u.up.phases);
        o.dw_taps = static_cast<int>(u.dw_weight.size() / u.dw_bias.size());
        o.dw_weight = up.vec(u.dw_weight);
        o.dw_bias = up.vec(u.dw_bias);
        o.norm_weight = up.vec(u.norm_weight);
        o.norm_bias = up.vec(u.norm_bias);
        o.pw1 = up.dense(u.pw1);
        o.pw2 = up.dense(u.pw2);
        o.gamma = up.vec(u.gamma);
    }
    out.decoder0 = up.dense(w.decoder0);
    for (std::size_t b = 0; b < w.blocks.size(); ++b) {
        const auto& blk = w.blocks[b];
        auto& o = out.blocks[b];
        o.rate = blk.up.stride;
        o.snake = up.snake(blk.snake);
        o.up = up.dense(blk.up.phases);
        for (std::size_t u = 0; u < blk.units.size(); ++u) {
            o.units[u].dilation = ref::residual_dilations[u];
            o.units[u].act1 = up.snake(blk.units[u].act1);
            o.units[u].conv1 = up.dense(blk.units[u].conv1, false, tf32_convs);  // the 7-tap conv
            o.units[u].act2 = up.snake(blk.units[u].act2);
            o.units[u].conv2 = up.dense(blk.units[u].conv2);
        }
    }
    out.final_snake = up.snake(w.final_snake);
    out.final_taps = w.final_conv.taps;
    out.final_weight = up.vec(w.final_conv.weight);  // [taps][in][1] = [taps][channels]
    out.final_bias = up.vec(w.final_conv.bias);
    if (const error* e = up.failed()) return *e;
    out.bytes = out.memory->memory.bytes();
    return out;
}

}  // namespace megatts::voc

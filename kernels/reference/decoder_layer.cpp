#include "kernels/reference/decoder_layer.h"

#include <cmath>

#include "kernels/reference/ops.h"

namespace megatts::ref {

void kv_layer_cache::append(const float* k, const float* v, int kv_width) {
    k_.insert(k_.end(), k, k + kv_width);
    v_.insert(v_.end(), v, v + kv_width);
    ++positions_;
}

void decoder_layer_step(const decoder_layer_weights& w, const transformer_dims& d,
                        kv_layer_cache& cache, float* x, layer_trace* trace) {
    const int hidden = d.hidden, hd = d.head_dim, qw = d.q_width(), kvw = d.kv_width();
    const int pos = cache.positions();
    std::vector<float> h(hidden), q(qw), k(kvw), v(kvw), ctx(qw), o(hidden);

    rms_norm(x, w.input_norm.data(), hidden, d.rms_eps, h.data());
    matvec(w.q.data.data(), qw, hidden, h.data(), q.data());
    matvec(w.k.data.data(), kvw, hidden, h.data(), k.data());
    matvec(w.v.data.data(), kvw, hidden, h.data(), v.data());
    for (int head = 0; head < d.heads; ++head) {
        float* qh = q.data() + head * hd;
        if (!w.q_norm.empty()) rms_norm(qh, w.q_norm.data(), hd, d.rms_eps, qh);
        apply_rope(qh, hd, pos, d.rope_theta);
    }
    for (int head = 0; head < d.kv_heads; ++head) {
        float* kh = k.data() + head * hd;
        if (!w.k_norm.empty()) rms_norm(kh, w.k_norm.data(), hd, d.rms_eps, kh);
        apply_rope(kh, hd, pos, d.rope_theta);
    }
    cache.append(k.data(), v.data(), kvw);

    const int group = d.heads / d.kv_heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    std::vector<float> scores(pos + 1);
    for (int head = 0; head < d.heads; ++head) {
        const int kvh = head / group;
        const float* qh = q.data() + head * hd;
        for (int j = 0; j <= pos; ++j) scores[j] = dot(qh, cache.k(j, kvw) + kvh * hd, hd) * scale;
        softmax(scores.data(), pos + 1);
        float* out = ctx.data() + head * hd;
        for (int i = 0; i < hd; ++i) out[i] = 0.f;
        for (int j = 0; j <= pos; ++j) {
            const float* vj = cache.v(j, kvw) + kvh * hd;
            for (int i = 0; i < hd; ++i) out[i] += scores[j] * vj[i];
        }
    }
    matvec(w.o.data.data(), hidden, qw, ctx.data(), o.data());
    for (int i = 0; i < hidden; ++i) x[i] += o[i];
    if (trace) {
        trace->input_norm = h;
        trace->q = q;
        trace->k = k;
        trace->v = v;
        trace->attn_ctx = ctx;
        trace->attn_o = o;
        trace->after_attn_residual.assign(x, x + hidden);
    }

    const int inter = d.intermediate;
    std::vector<float> gate(inter), up(inter), mlp(hidden);
    rms_norm(x, w.post_norm.data(), hidden, d.rms_eps, h.data());
    matvec(w.gate.data.data(), inter, hidden, h.data(), gate.data());
    matvec(w.up.data.data(), inter, hidden, h.data(), up.data());
    for (int i = 0; i < inter; ++i) gate[i] = silu(gate[i]) * up[i];
    matvec(w.down.data.data(), hidden, inter, gate.data(), mlp.data());
    for (int i = 0; i < hidden; ++i) x[i] += mlp[i];
    if (trace) {
        trace->mlp_out = mlp;
        trace->out.assign(x, x + hidden);
    }
}

}  // namespace megatts::ref

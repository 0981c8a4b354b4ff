#include "kernels/vocoder/vocoder_program.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "kernels/reference/vocoder/convnext_upsampler.h"
#include "kernels/vocoder/implicit_staging.h"

namespace megatts::voc {
namespace {

// Small batches leave most products with fewer tiles than the GPU has
// multiprocessors; K is then split until about two blocks per multiprocessor stream
// weights, but never below this many k-steps per split (the partial sums' traffic
// and the reducing block's work would outweigh what the split gains).
constexpr int k_min_steps_per_split = 4;
constexpr int k_blocks_per_sm = 2;

int ceil_div(long a, long b) { return static_cast<int>((a + b - 1) / b); }

// Each row tile reads the whole weight matrix (from L2 after the first): a smaller tile
// is worth it only while that traffic stays this small.
constexpr long k_max_weight_traffic_bytes = 64L << 20;

// The largest tile that gives every multiprocessor a tile of its own without splitting K,
// within the weight traffic above: a split's partial tiles and its last block's sum cost
// more than smaller tiles do where K is short (the 1920-row convs of one session: 45
// tiles of 128 rows, or 240 of 16). Else by rows (16-row tiles up to 32 rows: a 64-row
// tile would be half padding), and split K fills the GPU. Where N is no multiple of 64
// (96 and 288 at full size, the last decoder block's), tiles of 96 columns fit it
// exactly while they give every multiprocessor one: each A row staged in 1 and 3 tiles,
// where 64-column tiles pad N (to 128 and 320) and stage it in 2 and 5 (an H100 at B = 64:
// the block's 7-tap convs 174-179 -> 132-138 us, its 1x1 convs 128-140 -> 103-113, the
// call 4.28 -> 4.03 ms). 96-column tiles where N is also a multiple of 64 (192 to 1536)
// were slower there (the call 4.18 ms). Short of that, 64-column tiles while they still give
// every multiprocessor k_blocks_per_sm of them (B = 16 and 64 1.3% faster on an H100 than
// 32-column ones, B = 4 1.6% slower without that condition), else 32-column ones.
// Where no tile gives every multiprocessor one (above 64 rows: the decoder blocks' 160 to
// 640 rows of one session, 128 to 2,560 of four), the smallest tile the weight traffic
// allows, then split K: the most blocks stream the weights and each has the least tail.
// 16 rows for one-tap products (conv_gemm), 64 for the convs of several taps, whose
// implicit form (conv_implicit.cuh) needs 64 rows or more: on an H200 at B = 1 the 1x1
// convs of blocks 2 and 3 went from 128-row tiles' 16-20 us to 9-11, block 2's 7-tap convs
// from 21 to 17-19 us, the call 0.844 -> 0.795 ms; at B = 4 block 1's 1x1 convs 5-7 us
// each, the 7-tap convs of blocks 1-3 2-10 us, the call 1.005 -> 0.959 ms; B = 16 to 64
// unchanged. 64-row tiles for one-tap products the 16-row ones cannot take (the
// upsamplers' 17 MB matrices at B = 64) made B = 32 and 64 0.5-1% slower.
// `tf32`: the matrix's implicit products multiply TF32 operands (gemm_matrix::w_tf32).
gemm_shape choose_shape(long M, int N, long weight_bytes, int sms, int taps, bool tf32) {
    if (M <= 16) return gemm_shape::m16_n64;
    const long row_tiles_128 = ceil_div(M, 128);
    const bool exact96 = N % 64 != 0 && N % 96 == 0 && row_tiles_128 * ceil_div(N, 96) >= sms;
    const bool narrow = N % 64 != 0 && row_tiles_128 * ceil_div(N, 64) < static_cast<long>(k_blocks_per_sm) * sms;
    const gemm_shape large = exact96 ? gemm_shape::m128_n96 : narrow ? gemm_shape::m128_n32 : gemm_shape::m128_n64;
    // Convs of several taps above 64 rows stay in their implicit form, whose tiles have 64
    // rows or more: at B = 1 block 4's 7-tap convs (1,920 rows) 21 us each in 240 tiles of 16
    // rows, 16.5 in 60 of 64 (its transposed conv 15.0 -> 16.6; the call 0.787 -> 0.781 ms).
    // TF32 ones above 16 rows too, in one 64-row tile: at B = 1 block 1's 7-tap convs (32 rows)
    // 17.3 us each in two 16-row tiles of bf16x3 (each reading the 16.5 MB of weights), 12.5-13.1
    // in one (an H200; the call 0.624 -> 0.607 ms).
    const bool implicit_form = taps >= k_implicit_min_taps && (M > 64 || (tf32 && M > 16));
    for (gemm_shape s : {large, gemm_shape::m64_n64, gemm_shape::m16_n64}) {
        if (implicit_form && s == gemm_shape::m16_n64) continue;
        const gemm_shape_info t = gemm_shape_of(s);
        const long row_tiles = ceil_div(M, t.bm);
        if (row_tiles * ceil_div(N, t.bn) >= sms && row_tiles * weight_bytes <= k_max_weight_traffic_bytes) return s;
    }
    // Up to 64 rows, 16-row tiles while their weight traffic stays within half the bound
    // above: four times the tiles, each split's partial tile a quarter the size for the last
    // block to add up (the frame-rate transformer's 2-4 MB matrices at B = 33-64: the call 4%
    // faster at B = 64 on an H100); the upsamplers' 17 MB matrices at 64 rows keep 64-row tiles
    // (16-row ones made B = 16 6% slower).
    if (M <= 64) {
        if (implicit_form) return gemm_shape::m64_n64;
        const long row_tiles = ceil_div(M, gemm_shape_of(gemm_shape::m16_n64).bm);
        return M <= 32 || row_tiles * weight_bytes <= k_max_weight_traffic_bytes / 2 ? gemm_shape::m16_n64
                                                                                     : gemm_shape::m64_n64;
    }
    const gemm_shape fill = implicit_form ? gemm_shape::m64_n64 : gemm_shape::m16_n64;
    return ceil_div(M, gemm_shape_of(fill).bm) * weight_bytes <= k_max_weight_traffic_bytes ? fill : large;
}

act_view as_flat(const act_view& storage, int width) { return {storage.data, 0, width, 0}; }

class builder {
public:
    builder(const device_weights& w, const vocoder_buffers& b, int bucket, const program_resources& r)
        : w_(w),
          b_(b),
          bucket_(bucket),
          sms_(r.sms),
          stack_smem_(bucket <= k_stack_max_items ? r.stack_smem : 0),
          implicit_smem_(r.implicit_smem),
          cluster_sum_(r.cluster_sum) {
        program_.bucket = bucket;
    }

    result<vocoder_program> build() {
        frame_rate_layers();
        for (std::size_t k = 0; k < w_.upsamplers.size(); ++k) upsampler(static_cast<int>(k));
        decoder0();
        for (std::size_t i = 0; i < w_.blocks.size(); ++i) block(static_cast<int>(i));
        output();
        if (error_) return *error_;
        // The stack's barrier after every split-K counter of this program: a product
        // that overlaps the stack's launch (programmatic launch) never shares one.
        for (auto& op : program_.ops)
            if (auto* s = std::get_if<stack_op>(&op)) {
                s->barrier = program_.counters;
                program_.counters += 2;
            }
        return std::move(program_);
    }

private:
    static gemm_epilogue plain(const gemm_matrix& m) {
        gemm_epilogue e{};
        e.act = gemm_act::none;
        e.phases = 1;
        e.channels = m.N;
        return e;
    }

    static void snake_to(gemm_epilogue& e, const act_view& out, const device_snake& s) {
        e.snake_out = out;
        e.snake_alpha = s.alpha;
        e.snake_inv_beta = s.inv_beta;
    }

    static int vec(const act_view& v, int channels) {
        return channels % 4 == 0 && v.width % 4 == 0 && v.slot_stride % 4 == 0;
    }

    gemm_source flat(const act_view& v, const gemm_matrix& m) {
        if (m.taps != 1 && !error_)
            error_ = make_error(error_kind::invalid_input,
                                "cuda vocoder: a layer with " + std::to_string(m.taps) +
                                    " taps reads a tensor that keeps no history");
        return {v, m.in, 1, 1, vec(v, m.in)};
    }

    static gemm_source ring(const act_view& v, const gemm_matrix& m, int dilation) {
        return {v, m.in, m.taps, dilation, vec(v, m.in)};
    }

    void gemm(const gemm_matrix& m, const gemm_source& a, const gemm_epilogue& e, int rows_per_frame) {
        gemm_params p{};
        p.batch = b_.batch;
        p.rows_per_frame = rows_per_frame;
        p.a = a;
        p.b = {m.w_split, m.w_cores, nullptr, m.w, m.bias, m.K, m.N, m.n_pad};
        p.k_steps = m.k_steps;
        p.epi = e;
        if (stack_) {
            stack_product(p);
            return;
        }
        const long M = static_cast<long>(bucket_) * rows_per_frame;
        const long weight_bytes = static_cast<long>(m.k_steps) * k_gemm_k_step * m.n_pad * static_cast<long>(sizeof(float));
        const gemm_shape shape = choose_shape(M, m.N, weight_bytes, sms_, m.taps, m.w_tf32 != nullptr);
        const gemm_shape_info info = gemm_shape_of(shape);
        const int tiles_m = ceil_div(M, info.bm), tiles_n = ceil_div(m.N, info.bn);
        const long tiles = static_cast<long>(tiles_m) * tiles_n;
        int smem = info.smem_bytes;
        p.a.staged_rows = implicit_rows(p, shape, M);
        if (p.a.staged_rows > 0) {
            smem = implicit_smem_bytes(shape, p.a.staged_rows);
            p.b.w_tf32 = m.w_tf32;
        }
        // An implicit conv splits K by whole chunks: all of a chunk's taps in one split.
        const int unit = p.a.staged_rows > 0 ? p.a.taps : 1, units = m.k_steps / unit;
        int splits = 1;
        if (tiles < static_cast<long>(k_blocks_per_sm) * sms_) {
            const int wanted = ceil_div(static_cast<long>(k_blocks_per_sm) * sms_, tiles);
            splits = std::max(1, std::min(wanted, m.k_steps / std::max(k_min_steps_per_split, unit)));
        }
        const int per_split = ceil_div(units, splits) * unit;
        splits = ceil_div(m.k_steps, per_split);  // no split without steps
        p.splits = splits;
        p.steps_per_split = per_split;
        gemm_op op{p, shape,
                   dim3(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m), static_cast<unsigned>(splits)),
                   smem};
        op.params.cluster_sum = cluster_sum(op, tiles);
        program_.ops.push_back(op);
        if (splits > 1 && !op.params.cluster_sum) {
            program_.workspace_floats = std::max(program_.workspace_floats,
                                                 static_cast<std::size_t>(tiles) * splits * info.bm * info.bn);
            program_.counters = std::max(program_.counters, static_cast<std::size_t>(tiles));
        }
    }

    // Whether a split product's tiles add their splits' partial tiles within a cluster each
    // (conv_gemm.cuh): for small tiles whose clusters are all resident at once, as the
    // launch's blocks would be without clusters. Where they are not, the clusters would run
    // in waves: at B = 64 the frame-rate transformer's gate/up products (128 tiles in 3
    // splits, 384 blocks of the 396 an H200 holds) took 27 us in clusters, 18 without.
    // Measured on an H200, a call at B = 1 0.767 -> 0.687 ms (clusters of up to 8: 0.720),
    // B = 4 -5%, B = 16 and 32 -2.5 to -3.5% (bench/RESULTS.md).
    bool cluster_sum(const gemm_op& op, long tiles) const {
        const int splits = op.params.splits;
        if (!cluster_sum_ || splits < 2 || splits > k_max_cluster_splits || gemm_shape_of(op.shape).bm > k_max_cluster_sum_rows)
            return false;
        return tiles <= resident_clusters(op, splits);
    }

    // The rows an implicit conv of this product would stage per tile, at most (over the
    // bucket's tiles; a call with fewer items has no other tiles), or 0 where it runs as
    // conv_gemm: fewer than k_implicit_min_taps taps, channels not in whole chunks, a tile
    // of fewer than 64 rows (the left context would outweigh the rows), or staging beyond
    // implicit_smem_.
    int implicit_rows(const gemm_params& p, gemm_shape shape, long M) const {
        const gemm_source& a = p.a;
        const int bm = gemm_shape_of(shape).bm;
        if (implicit_smem_ <= 0 || a.taps < k_implicit_min_taps || !a.vec || a.channels % k_implicit_chunk != 0 ||
            a.view.ring_rows == 0 || p.epi.row_norm || bm < 64 || p.b.K != a.taps * a.channels)
            return 0;
        const int halo = (a.taps - 1) * a.dilation;
        int rows = 0;
        for (long m0 = 0; m0 < M; m0 += bm)
            rows = std::max(rows, staged_rows_of_tile(static_cast<int>(m0), static_cast<int>(std::min<long>(bm, M - m0)),
                                                      p.rows_per_frame, halo));
        const int smem = implicit_smem_bytes(shape, rows);
        return smem > 0 && smem <= implicit_smem_ ? rows : 0;
    }

    void frame_rate_layers() {
        const auto& d = w_.dims;
        program_.ops.push_back(gather_op{{b_.batch, w_.codebooks, b_.gathered.data, d.num_quantizers, d.codebook_size,
                                          d.codebook_vector_dim()},
                                         dim3(static_cast<unsigned>(bucket_))});
        gemm_epilogue e = plain(w_.dequant);
        e.out = b_.codes_proj;
        gemm(w_.dequant, flat(b_.gathered, w_.dequant), e, 1);
        e = plain(w_.pre_conv);
        e.out = b_.pre_out;
        gemm(w_.pre_conv, ring(b_.codes_proj, w_.pre_conv, 1), e, 1);
        if (stack_smem_ > 0) {
            begin_stack();
            transformer();
            if (end_stack()) return;
        }
        transformer();
    }

    // The input projection, the layers and the output projection: in the stack when one is
    // open, else an op each.
    void transformer() {
        const auto& t = w_.dims.transformer;
        gemm_epilogue e = plain(w_.input_proj);
        e.out = b_.h;
        gemm(w_.input_proj, flat(b_.pre_out, w_.input_proj), e, 1);
        for (std::size_t l = 0; l < w_.layers.size(); ++l) transformer_layer(static_cast<int>(l));
        e = plain(w_.output_proj);
        e.row_norm = 1;
        e.eps = t.rms_eps;
        e.out = b_.pt_out;
        gemm(w_.output_proj, flat(b_.h, w_.output_proj), e, 1);
    }

    void begin_stack() {
        stack_ = std::make_shared<frame_stack_params>();
        stack_->batch = b_.batch;
        stack_fits_ = true;
        stack_max_k_ = products_ = attentions_ = 0;
    }

    void stack_product(const gemm_params& p) {
        auto& s = *stack_;
        const int columns = stack_columns(p, sms_);
        // !p.b.w: a matrix uploaded without the f32 layout the stack reads.
        if (columns == 0 || !p.b.w || s.n_steps == k_stack_max_steps || products_ == k_stack_max_products) {
            stack_fits_ = false;
            return;
        }
        s.products[products_] = p;
        s.steps[s.n_steps++] = {stack_step_kind::product, products_++, columns, 0};
        stack_max_k_ = std::max(stack_max_k_, p.b.K);
    }

    void stack_attention(const attention_params& a) {
        auto& s = *stack_;
        if (s.n_steps == k_stack_max_steps || attentions_ == k_stack_max_attentions) {
            stack_fits_ = false;
            return;
        }
        s.attentions[attentions_] = a;
        s.steps[s.n_steps++] = {stack_step_kind::attention, attentions_++, 0, 0};
    }

    // Adds the stack's op if every step could run in it and its shared memory fits; else
    // the caller lays the transformer out op by op.
    bool end_stack() {
        const auto& t = w_.dims.transformer;
        const int smem = stack_smem_floats(bucket_, stack_max_k_, w_.dims.sliding_window, t.head_dim) *
                         static_cast<int>(sizeof(float));
        auto s = std::move(stack_);
        if (!stack_fits_ || smem > stack_smem_) return false;
        mark_residuals_ahead(*s);
        program_.ops.push_back(stack_op{std::move(s), 0, dim3(static_cast<unsigned>(sms_)), smem});
        return true;
    }

    // A product may read its residual ahead of the barrier before it where the step before
    // does not write that buffer (the kernel has waited for every earlier step by then).
    // Every view here starts at its own buffer, so a buffer is the same where its data
    // pointer is. The first step's predecessor is another launch: never ahead.
    static void mark_residuals_ahead(frame_stack_params& s) {
        for (int i = 1; i < s.n_steps; ++i) {
            stack_step& st = s.steps[i];
            if (st.kind != stack_step_kind::product) continue;
            const float* res = s.products[st.index].epi.res.data;
            if (!res) continue;
            const stack_step& before = s.steps[i - 1];
            bool written = false;
            if (before.kind == stack_step_kind::attention) {
                written = s.attentions[before.index].ctx == res;
            } else {
                const gemm_epilogue& e = s.products[before.index].epi;
                for (const act_view* v : {&e.out, &e.snake_out, &e.keys, &e.values}) written |= v->data == res;
            }
            st.residual_ahead = written ? 0 : 1;
        }
    }

    void transformer_layer(int l) {
        const auto& t = w_.dims.transformer;
        const int window = w_.dims.sliding_window;
        const device_layer& L = w_.layers[static_cast<std::size_t>(l)];
        const act_view keys = b_.layer_keys(l, window, t.kv_width()), values = b_.layer_values(l, window, t.kv_width());

        gemm_epilogue e = plain(L.qkv);
        e.act = gemm_act::qkv_rope;
        e.row_norm = 1;
        e.eps = t.rms_eps;
        e.out = b_.q;
        e.keys = keys;
        e.values = values;
        e.q_width = t.q_width();
        e.kv_width = t.kv_width();
        e.head_dim = t.head_dim;
        e.inv_freq = w_.inv_freq;
        gemm(L.qkv, flat(b_.h, L.qkv), e, 1);

        attention_params a{b_.batch, b_.q.data, b_.ctx.data, keys, values, t.heads, t.kv_heads, t.head_dim, window,
                           static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.head_dim)))};
        if (stack_)
            stack_attention(a);
        else
            program_.ops.push_back(attention_op{a, dim3(static_cast<unsigned>(bucket_ * t.heads)),
                                                attention_smem_floats(window, t.head_dim) *
                                                    static_cast<int>(sizeof(float))});

        e = plain(L.o);
        e.res = b_.h;
        e.res_scale = L.attn_scale;
        e.out = b_.h;
        gemm(L.o, flat(b_.ctx, L.o), e, 1);

        e = plain(L.gate_up);
        e.act = gemm_act::silu_mul;
        e.row_norm = 1;
        e.eps = t.rms_eps;
        e.channels = L.gate_up.N / 2;
        e.out = b_.mlp;
        gemm(L.gate_up, flat(b_.h, L.gate_up), e, 1);

        e = plain(L.down);
        e.res = b_.h;
        e.res_scale = L.mlp_scale;
        e.out = b_.h;
        gemm(L.down, flat(b_.mlp, L.down), e, 1);
    }

    void upsampler(int k) {
        const device_upsampler& U = w_.upsamplers[static_cast<std::size_t>(k)];
        const auto& r = b_.rows;
        const int n_in = r.upsample_in[static_cast<std::size_t>(k)], n_out = r.upsample_out[static_cast<std::size_t>(k)];
        const int channels = U.up.N / U.ratio;
        const act_view& raw = b_.up_raw[static_cast<std::size_t>(k)];

        gemm_epilogue e = plain(U.up);
        e.phases = U.ratio;
        e.channels = channels;
        e.out = raw;
        gemm(U.up, flat(k == 0 ? b_.pt_out : b_.up0_out, U.up), e, n_in);

        program_.ops.push_back(norm_op{{b_.batch, raw, b_.up_norm.data, U.dw_weight, U.dw_bias, U.norm_weight,
                                        U.norm_bias, channels, U.dw_taps, n_out, ref::convnext_norm_eps},
                                       dim3(static_cast<unsigned>(bucket_ * n_out))});

        e = plain(U.pw1);
        e.act = gemm_act::gelu;
        e.out = b_.up_hidden;
        gemm(U.pw1, flat(b_.up_norm, U.pw1), e, n_out);

        e = plain(U.pw2);
        e.res = raw;
        e.res_scale = U.gamma;
        e.out = k == 0 ? b_.up0_out : b_.decoder0_in;
        gemm(U.pw2, flat(b_.up_hidden, U.pw2), e, n_out);
    }

    void decoder0() {
        gemm_epilogue e = plain(w_.decoder0);
        snake_to(e, b_.block_in[0], w_.blocks[0].snake);
        gemm(w_.decoder0, ring(b_.decoder0_in, w_.decoder0, 1), e, b_.rows.upsample_out[1]);
    }

    void block(int i) {
        const device_block& B = w_.blocks[static_cast<std::size_t>(i)];
        const auto idx = static_cast<std::size_t>(i);
        const int n_in = b_.rows.block_in[idx], n_out = b_.rows.block_out[idx];
        const int channels = B.up.N / B.rate;
        std::array<act_view, 3> raw;
        for (std::size_t j = 0; j < raw.size(); ++j) raw[j] = as_flat(b_.unit_raw[j], channels);
        const act_view hidden = as_flat(b_.unit_hidden, channels);

        gemm_epilogue e = plain(B.up);
        e.phases = B.rate;
        e.channels = channels;
        e.out = raw[0];
        snake_to(e, b_.unit_in[idx][0], B.units[0].act1);
        gemm(B.up, ring(b_.block_in[idx], B.up, 1), e, n_in);

        for (std::size_t u = 0; u < B.units.size(); ++u) {
            const device_unit& U = B.units[u];
            e = plain(U.conv1);
            snake_to(e, hidden, U.act2);
            gemm(U.conv1, ring(b_.unit_in[idx][u], U.conv1, U.dilation), e, n_out);

            e = plain(U.conv2);
            e.res = raw[u];
            if (u + 1 < B.units.size()) {
                e.out = raw[u + 1];
                snake_to(e, b_.unit_in[idx][u + 1], B.units[u + 1].act1);
            } else if (idx + 1 < w_.blocks.size()) {
                snake_to(e, b_.block_in[idx + 1], w_.blocks[idx + 1].snake);
            } else {
                snake_to(e, b_.final_in, w_.final_snake);
            }
            gemm(U.conv2, flat(hidden, U.conv2), e, n_out);
        }
    }

    void output() {
        const int samples = b_.rows.samples;
        program_.ops.push_back(output_op{{b_.batch, b_.final_in, w_.final_weight, w_.final_bias, b_.audio.data,
                                          b_.final_in.width, w_.final_taps, samples, vec(b_.final_in, b_.final_in.width)},
                                         dim3(static_cast<unsigned>(ceil_div(samples, k_output_tile)),
                                              static_cast<unsigned>(bucket_))});
    }

    const device_weights& w_;
    const vocoder_buffers& b_;
    int bucket_, sms_;
    int stack_smem_;     // a stack's dynamic shared memory at most; 0: no stack
    int implicit_smem_;  // an implicit conv's dynamic shared memory at most; 0: none
    bool cluster_sum_;   // split K may add its partial tiles within clusters
    vocoder_program program_;
    std::optional<error> error_;
    // While the transformer is laid out into a stack: its parameters, whether every step
    // fits, the widest K of its products, and how many products and attentions it has.
    std::shared_ptr<frame_stack_params> stack_;
    bool stack_fits_ = false;
    int stack_max_k_ = 0, products_ = 0, attentions_ = 0;
};

}  // namespace

result<vocoder_program> build_program(const device_weights& w, const vocoder_buffers& b, int bucket,
                                      const program_resources& r) {
    return builder(w, b, bucket, r).build();
}

void bind_scratch(vocoder_program& p, float* workspace, unsigned int* counters) {
    for (auto& op : p.ops) {
        if (auto* g = std::get_if<gemm_op>(&op)) {
            g->params.workspace = workspace;
            g->params.counters = counters;
        } else if (auto* s = std::get_if<stack_op>(&op)) {
            s->params->barrier = counters + s->barrier;
        }
    }
}

}  // namespace megatts::voc

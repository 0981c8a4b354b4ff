// The host side of the megakernel: weight upload, slot pools, prompt and text-track
// embeddings (small matvec launches), and the frame launch. The only translation
// unit that instantiates the frame kernel, for the 0.6B and the 1.7B shapes.
#include "kernels/megakernel/megakernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <cuda_runtime.h>

#include "kernels/cuda/launch_timer.h"
#include "kernels/megakernel/frame_kernel.cuh"
#include "kernels/megakernel/frame_shape.h"

namespace megatts {
namespace {

using mk::bf16;

static_assert(k_megakernel_max_sessions == mk::k_max_sessions_per_launch && k_megakernel_max_rows == mk::k_max_rows &&
                  k_megakernel_max_prompt_rows == mk::k_max_prompt_rows && k_megakernel_max_top_k == mk::k_max_top_k,
              "megakernel.h states the launch limits of device_model.h");

error cuda_error(cudaError_t e, const char* what, const char* file, int line) {
    return make_error(error_kind::unavailable, std::string("CUDA ") + what + " failed at " + file + ":" +
                                                   std::to_string(line) + ": " + cudaGetErrorName(e) + ": " +
                                                   cudaGetErrorString(e));
}

#define MK_CHECK(call)                                                              \
    do {                                                                            \
        cudaError_t mk_e_ = (call);                                                 \
        if (mk_e_ != cudaSuccess) return cuda_error(mk_e_, #call, __FILE__, __LINE__); \
    } while (0)

// ---- small launches around the frame kernel: prompt and text-track embeddings ----

// The most rows of one embedding call: a prompt, or a launch's text tracks (a row per distinct
// text id, so at most one a session).
constexpr int k_embed_rows = std::max(mk::k_max_prompt_rows, mk::k_max_sessions_per_launch);

struct embed_params {
    const bf16* text_embedding;  // [text_vocab, text_hidden]
    const bf16 *fc1, *fc1_bias, *fc2, *fc2_bias, *codec_embedding;
    const std::int32_t* text_ids;   // [rows], -1: no text part
    const std::int32_t* codec_ids;  // [rows], -1: no codec part
    float* a;    // [rows, text_hidden] scratch
    float* b;    // [rows, text_hidden] scratch
    float* out;  // [rows, hidden]
    int rows, text_hidden, hidden;
};

__global__ void gather_text_kernel(embed_params p) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < p.rows * p.text_hidden; i += gridDim.x * blockDim.x) {
        const int r = i / p.text_hidden, k = i % p.text_hidden;
        const int id = p.text_ids[r];
        p.a[i] = id < 0 ? 0.f : __bfloat162float(p.text_embedding[static_cast<long>(id) * p.text_hidden + k]);
    }
}

__global__ void __launch_bounds__(mk::k_threads) text_fc1_kernel(embed_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    auto& s = *reinterpret_cast<mk::matvec_smem*>(smem);
    mk::act_source src{p.a, p.text_hidden, nullptr, 0.f, nullptr, p.text_hidden};
    mk::weight_frags f;
    mk::matvec<1>(s, f, false, p.fc1, p.text_hidden, p.text_hidden, p.rows, src, [&](int n, int r, float v) {
        v += __bfloat162float(p.fc1_bias[n]);
        p.b[r * p.text_hidden + n] = v / (1.0f + expf(-v));
    });
}

__global__ void __launch_bounds__(mk::k_threads) text_fc2_kernel(embed_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    auto& s = *reinterpret_cast<mk::matvec_smem*>(smem);
    mk::act_source src{p.b, p.text_hidden, nullptr, 0.f, nullptr, p.text_hidden};
    mk::weight_frags f;
    mk::matvec<1>(s, f, false, p.fc2, p.hidden, p.text_hidden, p.rows, src, [&](int n, int r, float v) {
        float out = p.text_ids[r] < 0 ? 0.f : v + __bfloat162float(p.fc2_bias[n]);
        if (p.codec_ids[r] >= 0)
            out += __bfloat162float(p.codec_embedding[static_cast<long>(p.codec_ids[r]) * p.hidden + n]);
        p.out[r * p.hidden + n] = out;
    });
}

// Kernel parameters may take 32,764 bytes on sm_70 and later (CUDA 12.1).
static_assert(sizeof(mk::frame_params) <= 32764, "frame_params must fit the kernel parameter space");

// Two instantiations a shape: with matvec's row groups (launches of more than 64 talker rows, where
// they take 8% off a frame of 128) and without (up to 64, where their code's register spills cost
// a one-session frame 3%: bench/RESULTS.md, 2026-12-01). Either computes a row's sums the same way.
template <class S, bool RowGroups>
__global__ void __launch_bounds__(mk::k_threads, 1) frame_kernel(const __grid_constant__ mk::frame_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    mk::frame_runner<S, RowGroups>(p, *reinterpret_cast<mk::kernel_smem*>(smem)).run();
}

template <class T>
struct device_array {
    T* ptr = nullptr;
    ~device_array() { cudaFree(ptr); }
    result<void> alloc(std::size_t n) {
        MK_CHECK(cudaMalloc(&ptr, n * sizeof(T)));
        return {};
    }
};

}  // namespace

struct megakernel::impl {
    talker_dims talker;
    code_predictor_dims cp;
    megakernel_limits limits;
    megakernel_policy policy;
    bool big = false;  // the 1.7B shape
    bool broken = false;
    int blocks = 0;
    std::uint32_t sequence = 0;

    mk::model_weights weights{};
    mk::state_pools pools{};
    mk::scratch scr{};
    mk::rope_table rope{};
    const bf16 *text_embedding = nullptr, *fc1 = nullptr, *fc1_bias = nullptr, *fc2 = nullptr, *fc2_bias = nullptr;

    device_array<bf16> arena;  // every weight
    device_array<bf16> k_cache, v_cache, cp_k, cp_v;
    device_array<std::int32_t> history, codes, embed_ids;
    device_array<float> next_input, prompts, text_tracks, x, qkv, hidden, logits, cp_logits, cp_embed, embed_a, embed_b;
    device_array<bf16> xs, ctx, act;
    device_array<unsigned int> barrier, attention_tickets;
    device_array<float> attention_partials, row_ss;
    device_array<phase_mark> phase_marks;  // allocated by the first log_phases(true)
    device_array<unsigned int> phase_work;  // [k_max_phase_marks, blocks], with phase_marks
    device_array<std::int32_t> forced;
    std::int32_t* host_codes = nullptr;
    std::uint32_t* host_flag = nullptr;
    mk::launch_desc host_desc{};  // filled by run_frame, passed in the launch's parameters
    std::vector<int> prompt_rows, kv_length;
    std::vector<std::int32_t> track_ids;  // the text id of each row of text_tracks, as embedded
    cudaStream_t stream = nullptr;
    launch_timer* timer = nullptr;

    ~impl() {
        if (host_codes) cudaFreeHost(host_codes);
        if (host_flag) cudaFreeHost(host_flag);
        if (stream) cudaStreamDestroy(stream);
    }

    std::size_t smem_bytes() const { return sizeof(mk::kernel_smem); }

    // Row r of the prompt stored for `slot` (set_prompt; k_max_prompt_rows rows a slot).
    float* stored_prompt(int slot, int r) const {
        return prompts.ptr + (static_cast<long>(slot) * mk::k_max_prompt_rows + r) * talker.body.hidden;
    }

    // The frame kernel's launch: one block per SM in clusters (matvec.cuh's split K hands one
    // block's sums to the other through distributed shared memory).
    cudaLaunchConfig_t frame_launch(cudaLaunchAttribute& cluster) const {
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim = {static_cast<unsigned int>(mk::k_split_cluster), 1, 1};
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(static_cast<unsigned int>(blocks));
        cfg.blockDim = dim3(mk::k_threads);
        cfg.dynamicSmemBytes = smem_bytes();
        cfg.stream = stream;
        cfg.attrs = &cluster;
        cfg.numAttrs = 1;
        return cfg;
    }

    result<void> upload(const megakernel_tensors& t);
    result<void> allocate();
    // Queues the embeddings of rows (text part + codec part) into out on the stream; the caller
    // synchronises where it needs them done.
    result<void> embed(std::span<const std::int32_t> text_ids, std::span<const std::int32_t> codec_ids, float* out);
    // Points each session of host_desc at the text-track vector of its item's text id: one
    // row of text_tracks per distinct id, embedded (queued before the launch) only when the
    // launch's distinct ids differ from the last launch's. Steady state (every session past
    // its text, on tts_pad) embeds nothing; before, a synchronised embed per session per frame
    // cost the engine's steps about 40 us a session.
    result<void> set_text_tracks(std::span<const frame_item> items);
    template <class S>
    result<void> launch(bool talker_only, const std::function<void()>& meanwhile);
};

namespace {

// The arena layout: every tensor at a 256-byte boundary (16-byte loads need 16).
class arena_builder {
public:
    std::size_t add(std::size_t elements) {
        std::size_t at = size_;
        size_ += (elements + 127) / 128 * 128;
        return at;
    }
    std::size_t size() const { return size_; }

private:
    std::size_t size_ = 0;
};

struct pending_copy {
    std::size_t offset;
    std::vector<std::uint16_t> data;  // staged (concatenated or interleaved) on the host
    const std::uint16_t* direct = nullptr;
    std::size_t elements = 0;
};

}  // namespace

result<void> megakernel::impl::upload(const megakernel_tensors& t) {
    const int h = talker.body.hidden, ch = cp.body.hidden;
    arena_builder layout;
    std::vector<pending_copy> copies;
    auto direct = [&](const std::uint16_t* src, std::size_t n) {
        std::size_t at = layout.add(n);
        copies.push_back({at, {}, src, n});
        return at;
    };
    auto staged = [&](std::vector<std::uint16_t> data) {
        std::size_t at = layout.add(data.size());
        copies.push_back({at, std::move(data), nullptr, 0});
        return at;
    };
    struct layer_offsets {
        std::size_t in_norm, qkv, q_norm, k_norm, o, post_norm, gate_up, down;
    };
    auto layer = [&](const megakernel_layer_tensors& L, const transformer_dims& d) {
        const std::size_t hid = static_cast<std::size_t>(d.hidden);
        std::vector<std::uint16_t> qkv;
        qkv.insert(qkv.end(), L.q, L.q + d.q_width() * hid);
        qkv.insert(qkv.end(), L.k, L.k + d.kv_width() * hid);
        qkv.insert(qkv.end(), L.v, L.v + d.kv_width() * hid);
        // gate/up interleaved in 8-row blocks: each 16-row MMA tile holds both halves.
        std::vector<std::uint16_t> gu(2 * static_cast<std::size_t>(d.intermediate) * hid);
        for (int blk = 0; blk < d.intermediate / 8; ++blk)
            for (int r = 0; r < 8; ++r) {
                const std::size_t src = (static_cast<std::size_t>(blk) * 8 + r) * hid;
                std::memcpy(&gu[(static_cast<std::size_t>(blk) * 16 + r) * hid], L.gate + src, hid * 2);
                std::memcpy(&gu[(static_cast<std::size_t>(blk) * 16 + 8 + r) * hid], L.up + src, hid * 2);
            }
        layer_offsets o;
        o.in_norm = direct(L.in_norm, hid);
        o.qkv = staged(std::move(qkv));
        o.q_norm = direct(L.q_norm, d.head_dim);
        o.k_norm = direct(L.k_norm, d.head_dim);
        o.o = direct(L.o, hid * d.q_width());
        o.post_norm = direct(L.post_norm, hid);
        o.gate_up = staged(std::move(gu));
        o.down = direct(L.down, hid * d.intermediate);
        return o;
    };
    std::vector<layer_offsets> tl, cl;
    for (const auto& L : t.talker_layers) tl.push_back(layer(L, talker.body));
    for (const auto& L : t.cp_layers) cl.push_back(layer(L, cp.body));
    const std::size_t th = static_cast<std::size_t>(talker.text_hidden);
    const auto o_text = direct(t.text_embedding, static_cast<std::size_t>(talker.text_vocab) * th);
    const auto o_fc1 = direct(t.text_fc1, th * th), o_fc1b = direct(t.text_fc1_bias, th);
    const auto o_fc2 = direct(t.text_fc2, static_cast<std::size_t>(h) * th), o_fc2b = direct(t.text_fc2_bias, h);
    const auto o_codec = direct(t.codec_embedding, static_cast<std::size_t>(talker.codec_vocab) * h);
    const auto o_norm = direct(t.talker_norm, h);
    const auto o_head = direct(t.codec_head, static_cast<std::size_t>(talker.codec_vocab) * h);
    const auto o_cp_norm = direct(t.cp_norm, ch);
    std::vector<std::uint16_t> heads, tables;
    for (int j = 0; j < cp.steps(); ++j) {
        heads.insert(heads.end(), t.cp_heads[j], t.cp_heads[j] + static_cast<std::size_t>(cp.vocab) * ch);
        tables.insert(tables.end(), t.cp_embeddings[j], t.cp_embeddings[j] + static_cast<std::size_t>(cp.vocab) * h);
    }
    const auto o_heads = staged(std::move(heads));
    const auto o_tables = staged(std::move(tables));
    std::size_t o_proj = 0, o_projb = 0;
    if (cp.has_projection) {
        o_proj = direct(t.cp_projection, static_cast<std::size_t>(ch) * h);
        o_projb = direct(t.cp_projection_bias, ch);
    }

    MEGATTS_TRY(arena.alloc(layout.size()));
    for (const auto& c : copies) {
        const void* src = c.direct ? static_cast<const void*>(c.direct) : static_cast<const void*>(c.data.data());
        const std::size_t n = c.direct ? c.elements : c.data.size();
        MK_CHECK(cudaMemcpy(arena.ptr + c.offset, src, n * 2, cudaMemcpyHostToDevice));
    }
    auto at = [&](std::size_t off) -> const bf16* { return arena.ptr + off; };
    auto fill = [&](mk::layer_weights& w, const layer_offsets& o) {
        w = {at(o.in_norm), at(o.qkv), at(o.q_norm), at(o.k_norm), at(o.o), at(o.post_norm), at(o.gate_up), at(o.down)};
    };
    for (std::size_t i = 0; i < tl.size(); ++i) fill(weights.talker[i], tl[i]);
    for (std::size_t i = 0; i < cl.size(); ++i) fill(weights.cp[i], cl[i]);
    weights.talker_norm = at(o_norm);
    weights.codec_head = at(o_head);
    weights.codec_embedding = at(o_codec);
    weights.cp_norm = at(o_cp_norm);
    weights.cp_heads = at(o_heads);
    weights.cp_embeddings = at(o_tables);
    weights.cp_projection = cp.has_projection ? at(o_proj) : nullptr;
    weights.cp_projection_bias = cp.has_projection ? at(o_projb) : nullptr;
    text_embedding = at(o_text);
    fc1 = at(o_fc1);
    fc1_bias = at(o_fc1b);
    fc2 = at(o_fc2);
    fc2_bias = at(o_fc2b);
    return {};
}

result<void> megakernel::impl::allocate() {
    const std::size_t slots = static_cast<std::size_t>(limits.slots), pos = static_cast<std::size_t>(limits.max_positions);
    const std::size_t kvw = static_cast<std::size_t>(talker.body.kv_width()), h = static_cast<std::size_t>(talker.body.hidden);
    const std::size_t rows = mk::k_max_activation_rows;
    const std::size_t width = std::max<std::size_t>(h, static_cast<std::size_t>(cp.body.hidden));
    MEGATTS_TRY(k_cache.alloc(slots * talker.body.layers * pos * kvw));
    MEGATTS_TRY(v_cache.alloc(slots * talker.body.layers * pos * kvw));
    MEGATTS_TRY(cp_k.alloc(slots * cp.body.layers * talker.num_code_groups * kvw));
    MEGATTS_TRY(cp_v.alloc(slots * cp.body.layers * talker.num_code_groups * kvw));
    MEGATTS_TRY(history.alloc(slots * pos));
    MEGATTS_TRY(next_input.alloc(slots * h));
    MEGATTS_TRY(prompts.alloc(slots * mk::k_max_prompt_rows * h));
    MEGATTS_TRY(text_tracks.alloc(static_cast<std::size_t>(mk::k_max_sessions_per_launch) * h));
    MEGATTS_TRY(x.alloc(rows * width));
    MEGATTS_TRY(xs.alloc(rows * width));
    MEGATTS_TRY(row_ss.alloc(rows * mk::k_row_ss_tiles));
    if (width / 16 > static_cast<std::size_t>(mk::k_row_ss_tiles))
        return make_error(error_kind::unavailable, "megakernel: hidden size above the row sums' room");
    MEGATTS_TRY(qkv.alloc(rows * (talker.body.q_width() + 2 * kvw)));
    MEGATTS_TRY(ctx.alloc(rows * talker.body.q_width()));
    MEGATTS_TRY(act.alloc(rows * std::max(talker.body.intermediate, cp.body.intermediate)));
    const std::size_t sessions = mk::k_max_sessions_per_launch;
    MEGATTS_TRY(hidden.alloc(sessions * h));
    MEGATTS_TRY(logits.alloc(sessions * talker.codec_vocab));
    MEGATTS_TRY(cp_logits.alloc(sessions * cp.steps() * cp.vocab));
    MEGATTS_TRY(cp_embed.alloc(2 * sessions * h));
    MEGATTS_TRY(codes.alloc(sessions * talker.num_code_groups));
    MEGATTS_TRY(forced.alloc(sessions * talker.num_code_groups));
    MEGATTS_TRY(barrier.alloc(1));
    MEGATTS_TRY(attention_tickets.alloc(blocks));
    MEGATTS_TRY(attention_partials.alloc(static_cast<std::size_t>(blocks) * (2 + mk::k_head_dim)));
    MK_CHECK(cudaMemset(attention_tickets.ptr, 0, blocks * sizeof(unsigned int)));
    MEGATTS_TRY(embed_ids.alloc(2 * k_embed_rows));
    MEGATTS_TRY(embed_a.alloc(k_embed_rows * static_cast<std::size_t>(talker.text_hidden)));
    MEGATTS_TRY(embed_b.alloc(k_embed_rows * static_cast<std::size_t>(talker.text_hidden)));
    MK_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_codes), sessions * talker.num_code_groups * 4,
                           cudaHostAllocMapped));
    MK_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_flag), 4, cudaHostAllocMapped));
    *host_flag = 0;
    MK_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    pools = {k_cache.ptr, v_cache.ptr, cp_k.ptr, cp_v.ptr, history.ptr, next_input.ptr, limits.max_positions};
    std::int32_t* dev_host_codes = nullptr;
    std::uint32_t* dev_host_flag = nullptr;
    MK_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_host_codes), host_codes, 0));
    MK_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_host_flag), host_flag, 0));
    scr = {x.ptr, row_ss.ptr, xs.ptr, qkv.ptr, ctx.ptr, act.ptr, hidden.ptr, logits.ptr, cp_logits.ptr, cp_embed.ptr, codes.ptr,
           dev_host_codes, dev_host_flag, barrier.ptr, {nullptr, nullptr}, {attention_partials.ptr, attention_tickets.ptr}};
    prompt_rows.assign(slots, 0);
    kv_length.assign(slots, 0);
    for (int i = 0; i < talker.body.head_dim / 2; ++i)
        rope.inv_freq[i] = static_cast<float>(
            1.0 / std::pow(static_cast<double>(weights.rope_theta), (2.0 * i) / talker.body.head_dim));
    return {};
}

result<void> megakernel::impl::embed(std::span<const std::int32_t> text_ids, std::span<const std::int32_t> codec_ids,
                                     float* out) {
    const int rows = static_cast<int>(text_ids.size());
    MK_CHECK(cudaMemcpyAsync(embed_ids.ptr, text_ids.data(), rows * 4, cudaMemcpyHostToDevice, stream));
    MK_CHECK(cudaMemcpyAsync(embed_ids.ptr + k_embed_rows, codec_ids.data(), rows * 4, cudaMemcpyHostToDevice,
                             stream));
    embed_params p{text_embedding, fc1, fc1_bias, fc2, fc2_bias, weights.codec_embedding, embed_ids.ptr,
                   embed_ids.ptr + k_embed_rows, embed_a.ptr, embed_b.ptr, out, rows, talker.text_hidden,
                   talker.body.hidden};
    const int smem = sizeof(mk::matvec_smem);
    gather_text_kernel<<<blocks, mk::k_threads, 0, stream>>>(p);
    text_fc1_kernel<<<blocks, mk::k_threads, smem, stream>>>(p);
    text_fc2_kernel<<<blocks, mk::k_threads, smem, stream>>>(p);
    MK_CHECK(cudaGetLastError());
    return {};
}

result<void> megakernel::impl::set_text_tracks(std::span<const frame_item> items) {
    std::vector<std::int32_t> ids;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto row = std::find(ids.begin(), ids.end(), items[i].text_id) - ids.begin();
        if (row == std::ssize(ids)) ids.push_back(items[i].text_id);
        host_desc.sessions[i].text_track = text_tracks.ptr + row * talker.body.hidden;
    }
    if (ids == track_ids) return {};
    track_ids.clear();  // until the new rows are queued
    // The source vectors are pageable: each copy has left them when cudaMemcpyAsync returns.
    const std::vector<std::int32_t> none(ids.size(), prompt_row::none);
    MEGATTS_TRY(embed(ids, none, text_tracks.ptr));
    track_ids = std::move(ids);
    return {};
}

template <class S>
result<void> megakernel::impl::launch(bool talker_only, const std::function<void()>& meanwhile) {
    MK_CHECK(cudaMemsetAsync(barrier.ptr, 0, sizeof(unsigned int), stream));
    if (scr.phases.marks) {
        MK_CHECK(cudaMemsetAsync(scr.phases.marks, 0, sizeof(phase_mark) * k_max_phase_marks, stream));
        MK_CHECK(cudaMemsetAsync(scr.phases.work, 0, sizeof(unsigned int) * k_max_phase_marks * blocks, stream));
    }
    mk::frame_params p{weights, pools, scr, host_desc, rope,
                       {policy.eos, policy.suppress_begin, policy.suppress_end}, ++sequence, talker_only};
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t cfg = frame_launch(cluster);
    const bool row_groups = host_desc.n_rows > mk::k_row_chunk;
    MK_CHECK(cudaLaunchKernelEx(&cfg, row_groups ? frame_kernel<S, true> : frame_kernel<S, false>, p));
    if (timer) MEGATTS_TRY(timer->end(stream));
    if (meanwhile) meanwhile();
    MK_CHECK(cudaStreamSynchronize(stream));
    if (*host_flag != sequence)
        return make_error(error_kind::internal, "megakernel: frame completed without publishing its codes");
    return {};
}

megakernel::megakernel(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
megakernel::~megakernel() = default;

result<std::unique_ptr<megakernel>> megakernel::create(const megakernel_tensors& t, const megakernel_limits& limits,
                                                       const megakernel_policy& policy, float rms_eps,
                                                       float rope_theta) {
    auto p = std::make_unique<impl>();
    p->talker = t.talker;
    p->cp = t.code_predictor;
    p->limits = limits;
    p->policy = policy;
    const auto& tb = t.talker.body;
    const auto& cb = t.code_predictor.body;
    auto matches = [&](auto shape) {
        using S = decltype(shape);
        return tb.hidden == S::hidden && tb.intermediate == S::intermediate && tb.layers == S::layers &&
               tb.heads == S::heads && tb.kv_heads == S::kv_heads && tb.head_dim == S::head_dim &&
               t.talker.codec_vocab == S::codec_vocab && t.talker.text_hidden == S::text_hidden &&
               cb.hidden == S::cp_hidden && cb.intermediate == S::cp_intermediate && cb.layers == S::cp_layers &&
               cb.heads == S::heads && cb.kv_heads == S::kv_heads && cb.head_dim == S::head_dim &&
               t.code_predictor.vocab == S::cp_vocab && t.talker.num_code_groups == S::groups &&
               tb.rope_theta == cb.rope_theta && tb.rms_eps == cb.rms_eps;
    };
    if (matches(mk::shape_0b6{})) p->big = false;
    else if (matches(mk::shape_1b7{})) p->big = true;
    else
        return make_error(error_kind::unavailable,
                          "megakernel: the model's dimensions (talker " + std::to_string(tb.layers) + " x " +
                              std::to_string(tb.hidden) + ", code predictor " + std::to_string(cb.layers) + " x " +
                              std::to_string(cb.hidden) + ") match no compiled shape (0.6B, 1.7B)");
    if (limits.slots < 1 || limits.max_positions < mk::k_max_prompt_rows + 16)
        return make_error(error_kind::invalid_input, "megakernel: slots must be >= 1 and max_positions >= " +
                                                         std::to_string(mk::k_max_prompt_rows + 16));
    p->weights.rms_eps = rms_eps;
    p->weights.rope_theta = rope_theta;

    int device = 0, sms = 0;
    MK_CHECK(cudaGetDevice(&device));
    MK_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    auto set_smem = [&](const void* fn, int bytes) -> result<void> {
        MK_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        return {};
    };
    // The shape's two frame kernels (with and without row groups).
    const void* fks[2] = {p->big ? reinterpret_cast<const void*>(frame_kernel<mk::shape_1b7, false>)
                                 : reinterpret_cast<const void*>(frame_kernel<mk::shape_0b6, false>),
                          p->big ? reinterpret_cast<const void*>(frame_kernel<mk::shape_1b7, true>)
                                 : reinterpret_cast<const void*>(frame_kernel<mk::shape_0b6, true>)};
    for (const void* fk : fks) MEGATTS_TRY(set_smem(fk, static_cast<int>(p->smem_bytes())));
    MEGATTS_TRY(set_smem(reinterpret_cast<const void*>(text_fc1_kernel), sizeof(mk::matvec_smem)));
    MEGATTS_TRY(set_smem(reinterpret_cast<const void*>(text_fc2_kernel), sizeof(mk::matvec_smem)));
    // One block per SM, every block resident (the phase counters), in clusters: as many clusters
    // as fit at once, of whichever kernel fits fewer.
    p->blocks = sms - sms % mk::k_split_cluster;
    for (const void* fk : fks) {
        int per_sm = 0;
        MK_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fk, mk::k_threads, p->smem_bytes()));
        if (per_sm < 1)
            return make_error(error_kind::unavailable, "megakernel: the frame kernel does not fit on one SM");
        cudaLaunchAttribute cluster;
        const cudaLaunchConfig_t cfg = p->frame_launch(cluster);
        int clusters = 0;
        MK_CHECK(cudaOccupancyMaxActiveClusters(&clusters, fk, &cfg));
        if (clusters < 1)
            return make_error(error_kind::unavailable, "megakernel: the frame kernel's clusters do not fit");
        p->blocks = std::min(p->blocks, clusters * mk::k_split_cluster);
    }

    MEGATTS_TRY(p->upload(t));
    MEGATTS_TRY(p->allocate());
    return std::unique_ptr<megakernel>(new megakernel(std::move(p)));
}

result<void> megakernel::set_prompt(int slot, std::span<const prompt_row> rows) {
    auto& p = *impl_;
    if (slot < 0 || slot >= p.limits.slots) return make_error(error_kind::invalid_input, "megakernel: bad slot");
    if (rows.empty() || static_cast<int>(rows.size()) > mk::k_max_prompt_rows)
        return make_error(error_kind::invalid_input, "megakernel: a prompt needs 1.." +
                                                         std::to_string(mk::k_max_prompt_rows) + " rows");
    std::vector<std::int32_t> text, codec;
    for (const auto& r : rows) text.push_back(r.text_id), codec.push_back(r.codec_id);
    MEGATTS_TRY(p.embed(text, codec, p.stored_prompt(slot, 0)));
    MK_CHECK(cudaStreamSynchronize(p.stream));  // the admission's time includes its embedding
    p.prompt_rows[static_cast<std::size_t>(slot)] = static_cast<int>(rows.size());
    p.kv_length[static_cast<std::size_t>(slot)] = 0;
    return {};
}

void megakernel::release(int slot) {
    if (slot < 0 || slot >= impl_->limits.slots) return;
    impl_->prompt_rows[static_cast<std::size_t>(slot)] = 0;
    impl_->kv_length[static_cast<std::size_t>(slot)] = 0;
}

result<void> megakernel::run_frame(std::span<const frame_item> items, std::span<std::int32_t> codes_out,
                                   bool talker_only, const std::function<void()>& meanwhile) {
    auto& p = *impl_;
    if (p.broken) return make_error(error_kind::unavailable, "megakernel: an earlier CUDA error disabled it");
    const int groups = p.talker.num_code_groups;
    if (items.empty() || items.size() > mk::k_max_sessions_per_launch || codes_out.size() < items.size() * groups)
        return make_error(error_kind::invalid_input, "megakernel: 1.." + std::to_string(mk::k_max_sessions_per_launch) +
                                                         " sessions per frame, " + std::to_string(groups) + " codes each");
    auto& d = p.host_desc;
    d.n_sessions = static_cast<int>(items.size());
    d.n_rows = 0;
    d.max_position = 0;
    std::vector<std::int32_t> forced;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& it = items[i];
        if (it.slot < 0 || it.slot >= p.limits.slots)
            return make_error(error_kind::invalid_input, "megakernel: bad slot " + std::to_string(it.slot));
        for (const auto* s : {&it.talker, &it.code_predictor})
            if (!s->greedy && (s->top_k < 1 || s->top_k > mk::k_max_top_k))
                return make_error(error_kind::invalid_input,
                                  "the cuda backend samples with top_k in 1.." + std::to_string(mk::k_max_top_k));
        const auto slot = static_cast<std::size_t>(it.slot);
        const int prompt = p.prompt_rows[slot];
        const int rows = prompt > 0 ? prompt : 1;
        if (d.n_rows + rows > mk::k_max_rows)
            return make_error(error_kind::invalid_input, "megakernel: more than " + std::to_string(mk::k_max_rows) +
                                                             " talker rows in one frame");
        if (p.kv_length[slot] + rows > p.limits.max_positions)
            return make_error(error_kind::invalid_input, "megakernel: slot " + std::to_string(it.slot) +
                                                             " is out of KV positions");
        auto& sd = d.sessions[i];
        sd = {it.slot, d.n_rows, rows, it.frame, it.seed,
              {it.talker.greedy, it.talker.temperature, it.talker.top_k, it.talker.top_p},
              {it.code_predictor.greedy, it.code_predictor.temperature, it.code_predictor.top_k, it.code_predictor.top_p},
              it.repetition_penalty, p.policy.min_new_tokens,
              nullptr, nullptr};
        if (it.forced_codes) {
            sd.forced_codes = p.forced.ptr + i * groups;
            forced.resize((i + 1) * groups);
            std::memcpy(forced.data() + i * groups, it.forced_codes, groups * 4);
        }
        for (int r = 0; r < rows; ++r) {
            const float* input = prompt > 0 ? p.stored_prompt(it.slot, r)
                                            : p.next_input.ptr + static_cast<long>(it.slot) * p.talker.body.hidden;
            d.rows[d.n_rows++] = {static_cast<int>(i), p.kv_length[slot] + r, input};
            d.max_position = std::max(d.max_position, p.kv_length[slot] + r);
        }
    }
    auto launched = [&]() -> result<void> {
        if (p.timer) MEGATTS_TRY(p.timer->begin(p.stream));
        MEGATTS_TRY(p.set_text_tracks(items));
        if (!forced.empty())
            MK_CHECK(cudaMemcpyAsync(p.forced.ptr, forced.data(), forced.size() * 4, cudaMemcpyHostToDevice, p.stream));
        return p.big ? p.launch<mk::shape_1b7>(talker_only, meanwhile)
                     : p.launch<mk::shape_0b6>(talker_only, meanwhile);
    }();
    if (!launched) {
        p.broken = true;
        return launched.err();
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto slot = static_cast<std::size_t>(items[i].slot);
        p.kv_length[slot] += d.sessions[i].rows;
        p.prompt_rows[slot] = 0;
    }
    std::memcpy(codes_out.data(), p.host_codes, items.size() * groups * 4);
    return {};
}

result<void> megakernel::log_phases(bool on) {
    auto& p = *impl_;
    if (on && !p.phase_marks.ptr) {
        MEGATTS_TRY(p.phase_marks.alloc(k_max_phase_marks));
        MEGATTS_TRY(p.phase_work.alloc(static_cast<std::size_t>(k_max_phase_marks) * p.blocks));
    }
    p.scr.phases = on ? phase_log{p.phase_marks.ptr, p.phase_work.ptr} : phase_log{nullptr, nullptr};
    return {};
}

result<std::vector<phase_span>> megakernel::read_phases() const {
    const auto& p = *impl_;
    if (!p.phase_marks.ptr) return std::vector<phase_span>{};
    std::vector<phase_mark> marks(k_max_phase_marks);
    MK_CHECK(cudaMemcpy(marks.data(), p.phase_marks.ptr, marks.size() * sizeof(phase_mark), cudaMemcpyDeviceToHost));
    std::vector<unsigned int> work(static_cast<std::size_t>(k_max_phase_marks) * p.blocks);
    MK_CHECK(cudaMemcpy(work.data(), p.phase_work.ptr, work.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    std::size_t n = 1;
    while (n < marks.size() && marks[n].clock != 0) ++n;
    std::vector<phase_span> spans;
    if (n < 2 || marks[n - 1].clock <= marks[0].clock) return spans;
    // SM cycles for the spans (fine-grained), scaled by the global timer over the whole
    // launch (the timer ticks too coarsely for single phases).
    const double ns_per_clock = static_cast<double>(marks[n - 1].ns - marks[0].ns) /
                                static_cast<double>(marks[n - 1].clock - marks[0].clock);
    // Every SM runs at block 0's clock rate, so its rate converts their counts too.
    for (std::size_t i = 1; i < n; ++i) {
        const auto first = work.begin() + static_cast<long>((i - 1) * p.blocks);
        const unsigned int slowest = *std::max_element(first, first + p.blocks);
        spans.push_back({static_cast<phase_kind>(marks[i].kind),
                         static_cast<double>(marks[i].clock - marks[i - 1].clock) * ns_per_clock / 1e3,
                         slowest * ns_per_clock / 1e3});
    }
    return spans;
}

result<frame_debug> megakernel::read_debug(int sessions) const {
    const auto& p = *impl_;
    frame_debug d;
    d.hidden.resize(static_cast<std::size_t>(sessions) * p.talker.body.hidden);
    d.logits.resize(static_cast<std::size_t>(sessions) * p.talker.codec_vocab);
    d.cp_logits.resize(static_cast<std::size_t>(sessions) * p.cp.steps() * p.cp.vocab);
    MK_CHECK(cudaMemcpy(d.hidden.data(), p.hidden.ptr, d.hidden.size() * 4, cudaMemcpyDeviceToHost));
    MK_CHECK(cudaMemcpy(d.logits.data(), p.logits.ptr, d.logits.size() * 4, cudaMemcpyDeviceToHost));
    MK_CHECK(cudaMemcpy(d.cp_logits.data(), p.cp_logits.ptr, d.cp_logits.size() * 4, cudaMemcpyDeviceToHost));
    return d;
}

void megakernel::time_launches(launch_timer* timer) { impl_->timer = timer; }

int megakernel::positions(int slot) const { return impl_->kv_length[static_cast<std::size_t>(slot)]; }
bool megakernel::failed() const { return impl_->broken; }
int megakernel::grid_blocks() const { return impl_->blocks; }
void* megakernel::stream() const { return impl_->stream; }

}  // namespace megatts

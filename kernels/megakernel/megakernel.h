// megakernel: the CUDA backend of the talker and code predictor. It owns the device
// copy of the weights, a pool of per-session slots (KV caches, codebook-0 history,
// next-input vectors) and runs one persistent kernel launch per frame for a batch of
// sessions (kernels/megakernel/frame_kernel.cuh).
//
// Contract: create() validates the dimensions against the compiled shapes (0.6B and
// 1.7B), uploads the weights and allocates the pools; it fails with a named error
// when CUDA is unusable, the dimensions match no compiled shape, or memory runs out.
// All other calls belong to the one thread that owns the CUDA context (the engine
// thread); they block until the GPU work they start is done (run_frame() returns
// with the codes in host memory). A slot is admitted with set_prompt(); its talker
// KV length is tracked here; release() frees it. Errors are values; a CUDA error is
// reported with file:line and leaves the megakernel unusable (failed() is true).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/model_dims.h"
#include "kernels/common/prompt_row.h"
#include "kernels/common/result.h"
#include "kernels/megakernel/phase_log.h"
#include "kernels/reference/sampler.h"

namespace megatts {
class launch_timer;
}

namespace megatts {

// Host views of the bf16 checkpoint tensors (e.g. into the mmap), [out, in] row-major.
struct megakernel_layer_tensors {
    const std::uint16_t *in_norm, *q, *k, *v, *q_norm, *k_norm, *o, *post_norm, *gate, *up, *down;
};

struct megakernel_tensors {
    talker_dims talker;
    code_predictor_dims code_predictor;
    std::vector<megakernel_layer_tensors> talker_layers, cp_layers;
    const std::uint16_t *text_embedding, *text_fc1, *text_fc1_bias, *text_fc2, *text_fc2_bias;
    const std::uint16_t *codec_embedding, *talker_norm, *codec_head, *cp_norm;
    std::vector<const std::uint16_t*> cp_embeddings, cp_heads;  // code_predictor.steps() each
    const std::uint16_t *cp_projection, *cp_projection_bias;    // null on 0.6B
};

// What one launch takes (kernels/megakernel/device_model.h holds the same numbers for the
// device; megakernel.cu checks they agree): sessions, talker input rows (a new session's whole
// prompt plus one row per running session), rows of one prompt, and top_k when sampling.
inline constexpr int k_megakernel_max_sessions = 128;
inline constexpr int k_megakernel_max_rows = 256;
inline constexpr int k_megakernel_max_prompt_rows = 128;
inline constexpr int k_megakernel_max_top_k = 64;

struct megakernel_limits {
    int slots = 8;             // sessions that can be admitted at once
    int max_positions = 2048;  // talker KV positions per slot (prompt + frames)
};

// Fixed per-model token policy of the official generate() (generation_setup.h).
struct megakernel_policy {
    std::int32_t eos = 2150;
    std::int32_t suppress_begin = 2048;
    std::int32_t suppress_end = 3072;
    int min_new_tokens = 2;
};

// One session's part of a frame launch.
struct frame_item {
    int slot = 0;
    int frame = 0;             // frames this session emitted before this one
    std::uint64_t seed = 0;
    ref::sampling_params talker, code_predictor;
    float repetition_penalty = 1.0f;
    // The frame's text-track id: its projection P(text_id) is added to the session's next
    // input (prompt_row::none: nothing is added).
    std::int32_t text_id = prompt_row::none;
    const std::int32_t* forced_codes = nullptr;  // 16 codes: teacher forcing (tests)
};

// What the last launch computed besides the codes (parity tests read these).
struct frame_debug {
    std::vector<float> hidden;     // [sessions, hidden] post-norm talker hidden
    std::vector<float> logits;     // [sessions, codec_vocab] raw talker logits
    std::vector<float> cp_logits;  // [sessions, 15, cp_vocab]
};

// One phase of a logged launch (phase_log.h): what it was, how long the grid spent on it,
// and how long its slowest block worked on it (the rest is the barrier and the blocks' skew).
struct phase_span {
    phase_kind kind = phase_kind::start;
    double us = 0;
    double work_us = 0;
};

class megakernel {
public:
    static result<std::unique_ptr<megakernel>> create(const megakernel_tensors& tensors, const megakernel_limits& limits,
                                                      const megakernel_policy& policy, float rms_eps, float rope_theta);
    ~megakernel();
    megakernel(const megakernel&) = delete;
    megakernel& operator=(const megakernel&) = delete;

    // Admits a session: its prompt rows become the talker rows of its first frame.
    result<void> set_prompt(int slot, std::span<const prompt_row> rows);
    void release(int slot);

    // One frame for every item (distinct slots); codes_out gets 16 codes per item
    // ({eos, -1, ...} for a session that ended). Blocks until they are in host memory.
    // talker_only (benchmarks) stops after codebook 0; the slot's next input is then
    // not updated. `meanwhile`, when set, runs on this thread once the frame is launched and
    // before the wait for it (the caller's host work overlaps the GPU's); it must not call
    // into this megakernel.
    result<void> run_frame(std::span<const frame_item> items, std::span<std::int32_t> codes_out,
                           bool talker_only = false, const std::function<void()>& meanwhile = {});

    // From now on each frame launch of run_frame() is timed on `timer` (begin before the
    // launch's uploads, end after its kernel, read once run_frame() returned); nullptr: not
    // timed. The timer must outlive its use here.
    void time_launches(launch_timer* timer);

    // From now on (on) each launch logs its phases; read_phases() returns the last logged
    // launch's, in order. Diagnosis only: block 0 pays a store per phase.
    result<void> log_phases(bool on);
    result<std::vector<phase_span>> read_phases() const;

    result<frame_debug> read_debug(int sessions) const;
    // The CUDA stream (a cudaStream_t as void*) that set_prompt() and run_frame() queue their
    // work on, for a caller that orders other GPU work before it (cuda_vocoder::queue_wait).
    void* stream() const;
    int positions(int slot) const;  // talker KV length of a slot
    bool failed() const;
    int grid_blocks() const;

    struct impl;

private:
    explicit megakernel(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace megatts

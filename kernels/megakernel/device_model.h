// device_model: plain structs of device pointers that the megakernel reads: the bf16
// weights (one decoder-layer struct for the talker and the code predictor alike),
// the per-session state pools, and the per-launch work description.
//
// Contract: POD, identical on host and device; the host fills them (megakernel.cu)
// and passes them by value as kernel parameters. Weights are row-major [out, in] as
// in the checkpoint, except gate/up, which the upload interleaves in 8-row blocks
// (rows g0..g7, u0..u7, g8..) so each 16-row MMA tile yields both halves of SwiGLU.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>

#include "kernels/megakernel/phase_log.h"

namespace megatts::mk {

using bf16 = __nv_bfloat16;

struct layer_weights {
    const bf16* in_norm;   // [hidden]
    const bf16* qkv;       // [q_width + 2 kv_width, hidden]: q rows, then k, then v
    const bf16* q_norm;    // [head_dim]
    const bf16* k_norm;    // [head_dim]
    const bf16* o;         // [hidden, q_width]
    const bf16* post_norm; // [hidden]
    const bf16* gate_up;   // [2 intermediate, hidden], 8-row interleaved
    const bf16* down;      // [hidden, intermediate]
};

inline constexpr int k_max_talker_layers = 28;
inline constexpr int k_max_cp_layers = 5;
inline constexpr int k_max_cp_passes = 15;

struct model_weights {
    layer_weights talker[k_max_talker_layers];
    const bf16* talker_norm;       // [hidden]
    const bf16* codec_head;        // [codec_vocab, hidden]
    const bf16* codec_embedding;   // [codec_vocab, hidden]
    layer_weights cp[k_max_cp_layers];
    const bf16* cp_norm;           // [cp_hidden]
    const bf16* cp_heads;          // [cp_passes, cp_vocab, cp_hidden]
    const bf16* cp_embeddings;     // [cp_passes, cp_vocab, hidden]
    const bf16* cp_projection;     // [cp_hidden, hidden] or null (0.6B)
    const bf16* cp_projection_bias;// [cp_hidden] or null
    float rms_eps;
    float rope_theta;
};

// Sampling of one level (talker codebook 0, or the code predictor), as in
// kernels/reference/sampler.h; top_k must be 1..k_max_top_k on the GPU.
struct sampling_desc {
    int greedy;
    float temperature;
    int top_k;
    float top_p;
};

inline constexpr int k_max_top_k = 64;

// One session in this launch.
struct session_desc {
    int slot;              // index into the state pools
    int first_row;         // its rows in this launch: [first_row, first_row + rows)
    int rows;              // 1 for a running session, the prompt length for a new one
    int frame;             // frames emitted so far (= index of the frame this launch makes)
    std::uint64_t seed;
    sampling_desc talker;
    sampling_desc cp;
    float repetition_penalty;
    int min_new_tokens;
    const float* text_track;   // [hidden] f32: the text-track vector of this frame
    const std::int32_t* forced_codes;  // [16] teacher forcing (tests), or null
};

// One input row: a position of a session whose embedding enters the talker.
struct row_desc {
    int session;   // index into launch_desc::sessions
    int position;  // talker KV position this row writes
    const float* input;  // [hidden] f32 embedding
};

// A launch's limits: sessions, talker rows (a new session's prompt, one row for a running one)
// and the rows of one prompt. Rows beyond the sessions let a launch of 128 running sessions
// take new sessions' prompts too, instead of leaving running sessions out for them.
inline constexpr int k_max_sessions_per_launch = 128;
inline constexpr int k_max_rows = 256;
inline constexpr int k_max_prompt_rows = 128;
static_assert(k_max_rows >= k_max_sessions_per_launch + k_max_prompt_rows - 1,
              "the longest prompt fits a launch beside every other session's row");
// The most activation rows of any product: the talker's rows, or the code predictor's first
// pass (two a session).
inline constexpr int k_max_activation_rows =
    k_max_rows > 2 * k_max_sessions_per_launch ? k_max_rows : 2 * k_max_sessions_per_launch;

struct launch_desc {
    int n_sessions;
    int n_rows;
    int max_position;  // the largest talker position of any row (how far attention walks)
    session_desc sessions[k_max_sessions_per_launch];
    row_desc rows[k_max_rows];
};

// Per-slot state pools, allocated once (capacity from the config).
struct state_pools {
    bf16* k_cache;            // [slots, layers, max_positions, kv_width]
    bf16* v_cache;
    bf16* cp_k;               // [slots, cp_layers, cp_positions, kv_width]
    bf16* cp_v;
    std::int32_t* history;    // [slots, max_positions]: codebook 0 of every frame
    float* next_input;        // [slots, hidden]: the next frame's talker input
    int max_positions;
};

// Talker attention split over the cache positions (attention.cuh's attention_task): each
// part's partial softmax, and per (row, head) the count of parts done; the last to finish
// merges them in part order. Tickets are zero between uses.
struct attention_parts_scratch {
    float* partials;        // [blocks][2 + head_dim]: max, sum, then the weighted values
    unsigned int* tickets;  // [blocks]
};

// scratch::row_ss: room for the widest hidden size (2048) in 16-column tiles, for every row.
inline constexpr int k_row_ss_tiles = 128;

// Scratch activations of one launch and the outputs.
struct scratch {
    float* x;          // [k_max_activation_rows, max(hidden, cp_hidden)] residual stream
    float* row_ss;     // [k_max_activation_rows, k_row_ss_tiles]: sums of x^2 per 16 columns (matvec.cuh's add_into)
    bf16* xs;          // like x: x times the next RMSNorm's weight, rounded as that product reads it (add_into)
    float* qkv;        // [k_max_activation_rows, qkv_width]
    bf16* ctx;         // [k_max_activation_rows, q_width]: attention output, rounded as the o-proj reads it
    bf16* act;         // [k_max_activation_rows, intermediate]: SwiGLU output, rounded as the down-proj reads it
    float* hidden;     // [sessions, hidden]: post-norm talker hidden of the frame (test output)
    float* logits;     // [sessions, codec_vocab]: raw talker logits (test output)
    float* cp_logits;  // [sessions, cp_passes, cp_vocab] (test output)
    float* cp_embed;   // [sessions * 2, hidden] code-predictor input embeddings before projection
    std::int32_t* codes;    // [sessions, 16] device copy
    std::int32_t* host_codes;  // [sessions, 16] mapped pinned host memory
    volatile std::uint32_t* host_flag;  // mapped pinned: launch sequence number written last
    unsigned int* barrier;  // grid barrier counter, zeroed before every launch
    phase_log phases;       // null pointers: no phase log (phase_log.h)
    attention_parts_scratch attention;  // the talker's attention, split over positions
};

}  // namespace megatts::mk

// cuda_vocoder: the speech-tokenizer decoder ("vocoder") on CUDA, streaming and
// batched across sessions: each call turns one frame of codes for each of up to 128
// sessions, at any mix of positions, into 1920 f32 samples each at 24 kHz (full
// size). It computes what kernels/reference/vocoder/vocoder_stream computes, frame by
// frame: split-RVQ dequantiser, causal pre-conv, the sliding-window transformer,
// ConvNeXt upsamplers, SnakeBeta decoder blocks and the output conv, within 1e-3 of
// the reference's audio (f32 weights as published, f32-accurate tensor-core products).
//
// Contract:
// - create() uploads the weights (the host copy may be dropped afterwards),
//   allocates `limits.slots` session slots and the scratch for calls of up to
//   `limits.max_batch` items, and captures one CUDA graph per batch bucket (1, 2, 4,
//   ..., max_batch). It fails with a named error when CUDA is unusable, the weights'
//   shapes are ones the kernels cannot run, or device memory runs out.
// - A session lives in a slot: admit(slot) starts it at frame 0 (nothing of an
//   earlier session of the slot is visible), vocode() advances it a frame per call
//   that names it, release(slot) frees the slot. A slot carries all the session's
//   causal state (every conv's left context, the transformer's keys and values of
//   the last `sliding_window` frames), so decoding frame by frame equals decoding the
//   whole utterance at once.
// - vocode(items, pcm): one frame per item (codes: num_quantizers values in
//   [0, codebook_size), each item a different admitted slot); item i's samples land
//   in pcm[i * samples_per_frame(), (i + 1) * samples_per_frame()), clamped to
//   [-1, 1]. It blocks until they are there (one stream synchronisation). Bad input
//   (too many or no items, an unknown, unadmitted or repeated slot, a code out of
//   range, pcm too small) is invalid_input and changes nothing.
// - The same call in halves, so that the caller's work overlaps the GPU's: launch(items)
//   checks and queues it (the slots' frames advance at once) and returns; collect(pcm)
//   waits for it and copies the samples out. One launch() at a time (another before its
//   collect() is invalid_input); between them admit() and release() may restart or free
//   any slot, the launched items' included (their frame is computed as launched), and
//   queue_wait(stream) makes later work on another CUDA stream (a cudaStream_t as void*,
//   so that this header needs no CUDA) wait for the launched call, without the host
//   waiting.
// - read_stage() returns one item's rows of a named intermediate of the last call
//   (tests and diagnosis): dequant, pre_conv, pre_transformer, upsample 0/1, decoder0,
//   block 1..4, audio, each time-major [rows][channels]. decoder0 and block b are
//   returned after the SnakeBeta of the stage that reads them (block 1..4's, then the
//   output's), which is the form the GPU keeps them in; the transformer's inner
//   layers are not kept (not_found).
// - Thread: every call from the one thread that owns the CUDA context (the engine
//   thread). A CUDA error is reported with its call and file:line and leaves the
//   vocoder unusable: failed() is true and every later call fails (unavailable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/vocoder/vocoder_stage.h"
#include "kernels/reference/vocoder/vocoder_weights.h"

namespace megatts {

class launch_timer;

struct cuda_vocoder_limits {
    int slots = 64;      // sessions admitted at once
    static constexpr int max_items = 128;  // the most items a call may have (the megakernel's)
    int max_batch = 64;  // items per vocode() call, 1..max_items
    // Replay a captured graph per call; false launches the kernels one by one (for
    // comparison in benchmarks; the results are the same).
    bool graphs = true;
    // Let each kernel start while its predecessor finishes (programmatic dependent
    // launch); false serialises them fully (same results).
    bool programmatic_launch = true;
    static constexpr int max_frame_stack_items = 16;
    // Run the frame-rate transformer of calls of up to this many items (at most
    // max_frame_stack_items) as one persistent launch where the GPU holds a block of it on
    // every multiprocessor; 0: a launch per product and attention always (same results
    // within f32 rounding). The default is where the stack was measured faster (RESULTS.md).
    int frame_stack_items = 4;
    // Let split K add a tile's partials within a thread-block cluster where the clusters
    // fit on the device; false: through a workspace in global memory always (same
    // samples, bit for bit). compute-sanitizer's racecheck cannot run the clusters
    // (bench/RESULTS.md); without them it checks every other kernel.
    bool cluster_sum = true;
    // On sm_90a, let the decoder blocks' 7-tap residual convs (most of a large call's tensor
    // work) multiply TF32 operands, one product where bf16x3 takes three: at 64 items a call
    // 6% faster, the audio within 6.6e-4 of the f32 reference's peak at full size (issue 5's
    // bound is 1e-3; PyTorch runs every conv in TF32 on this GPU unless told otherwise) and a
    // session's audio no longer the same to 2e-4 alone and in any batch (an activation near a
    // TF32 rounding boundary goes either way); false: f32-accurate bf16x3 everywhere (64 MB
    // less device memory). Elsewhere nothing changes.
    bool tf32_convs = true;
};

struct vocoder_frame {
    int slot = 0;
    std::span<const std::int32_t> codes;  // one frame: num_quantizers codes
};

class cuda_vocoder {
public:
    static result<std::unique_ptr<cuda_vocoder>> create(const ref::vocoder_weights& weights,
                                                        const cuda_vocoder_limits& limits);
    ~cuda_vocoder();
    cuda_vocoder(const cuda_vocoder&) = delete;
    cuda_vocoder& operator=(const cuda_vocoder&) = delete;

    result<void> admit(int slot);
    void release(int slot);
    result<void> vocode(std::span<const vocoder_frame> items, std::span<float> pcm);
    result<void> launch(std::span<const vocoder_frame> items);
    result<void> collect(std::span<float> pcm);
    result<void> queue_wait(void* stream);

    result<std::vector<float>> read_stage(ref::vocoder_stage stage, int index, int item) const;

    // From now on each vocode() or launch() is timed on `timer` (begin before the batch
    // description's upload, end after the audio's copy to the host: the whole call on the
    // stream; read once vocode() or collect() returned); nullptr: not timed.
    // The timer must outlive its use here.
    void time_calls(launch_timer* timer);

    int samples_per_frame() const;
    // Whether a call of `items` items runs the frame-rate transformer as one launch
    // (cuda_vocoder_limits::frame_stack_items, and the model's shapes and the GPU allow it).
    bool frame_stack_for(int items) const;
    // How many of a call's products of `items` items add their split K within clusters.
    int cluster_sums_for(int items) const;
    int frames_decoded(int slot) const;  // frames since admit; 0 for a free slot
    bool failed() const;
    std::size_t weight_bytes() const;          // device bytes of the uploaded weights
    std::size_t state_bytes_per_slot() const;  // device bytes of one session's rings

    struct impl;

private:
    explicit cuda_vocoder(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace megatts

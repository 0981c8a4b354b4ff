// engine_backend: the model work behind the engine, one batch at a time: open a slot for an
// utterance (its prompt and sampling), generate one frame for every item of a batch, vocode
// those frames, release the slot. Two implementations: the CPU reference
// (reference_backend.h, per slot a ref::generator and a vocoder stream) and the CUDA
// megakernel (cuda_backend.h, every item of a batch in one launch); tests add fakes.
//
// Contract: every call comes from the engine thread (the one that owns the CUDA context), one
// at a time, and blocks until its work is done. Slots are 0..limits().slots-1; the engine
// opens a slot before it uses it and releases it once (finished, cancelled, failed).
// generate() takes distinct open slots, at most max_batch items whose talker rows (the prompt's
// rows on a slot's first frame when prefill_in_step, else 1) fit in max_rows, and gives each
// item its 16 codes or nullopt when codebook 0 is EOS. A frame's audio comes in two calls, so
// that the engine's work overlaps it: start_vocode() takes frames generate() gave, in each
// slot's frame order, and begins their audio; finish_vocode() gives 1920 samples per item of
// the last start_vocode() (out.size() its items). Between the two the engine may call open()
// and release() for any slot (a slot released and opened again starts a new utterance; the
// started frame's audio is computed as started) and generate(), whose GPU work then follows
// the audio's; never a second start_vocode().
// Errors are values: open() fails with invalid_input for what this backend cannot run for the
// request (sampling settings out of its range, a prompt over max_prompt_rows); any error after
// which failed() is true means the backend is unusable (a CUDA error) and the engine moves to
// FAILED. finish_vocode() fails only so (start_vocode() checked the items).
//
// Timing: last_device_span() gives the GPU time of the last generate() or finish_vocode() to
// return (the audio's, from start to finish), on the host clock, where the backend measures it
// (the cuda backend: CUDA events around its launches, read after the call's own wait); the
// engine takes the host times around the calls where it does not, and for its TTFA marks
// prefers the device's.
//
// The vocoder seam: the audio is batched like generate(): the cuda backend runs every item in
// one launch of the batched CUDA vocoder (its per-session state admitted on open, freed on
// release), which finish_vocode() waits for; the reference backend decodes item by item on the
// CPU in start_vocode() (reference_vocoder_bank.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/prompt_row.h"
#include "kernels/common/result.h"
#include "kernels/cuda/launch_timer.h"
#include "kernels/reference/generator.h"

namespace megatts {

struct backend_limits {
    int slots = 1;            // utterances open at once
    int max_positions = 0;    // talker positions per slot, prompt + frames; 0: unbounded
    int max_batch = 1;        // items per generate()
    int max_rows = 0;         // talker rows per generate(); 0: unbounded
    int max_prompt_rows = 0;  // longest prompt open() takes; 0: unbounded
    bool prefill_in_step = false;  // the prompt's rows run in the slot's first generate()
};

struct generate_item {
    int slot = 0;
    int frame = 0;               // frames the slot emitted before this one
    std::int32_t text_id = 0;    // the frame's text-track id
};

struct vocode_item {
    int slot = 0;
    ref::frame_codes codes{};
};

class engine_backend {
public:
    virtual ~engine_backend() = default;

    virtual std::string_view name() const = 0;
    virtual backend_limits limits() const = 0;
    virtual result<void> open(int slot, std::span<const prompt_row> prompt, const ref::generation_options& options) = 0;
    // out.size() == items.size(). `meanwhile` (may be empty) runs at most once on the calling
    // thread: while the frame is computed where the backend computes elsewhere (the cuda
    // backend: after its launch, before its wait), else before it computes. A call that fails
    // may not have run it. Of the backend it may call finish_vocode() only (the cuda backend's
    // launch waits on the GPU for the audio's).
    virtual result<void> generate(std::span<const generate_item> items, std::span<std::optional<ref::frame_codes>> out,
                                  const std::function<void()>& meanwhile) = 0;
    virtual result<void> start_vocode(std::span<const vocode_item> items) = 0;
    // out.size() == the items of the last start_vocode().
    virtual result<void> finish_vocode(std::span<std::vector<float>> out) = 0;
    virtual void release(int slot) = 0;
    virtual bool failed() const = 0;
    virtual std::optional<host_span> last_device_span() const { return std::nullopt; }
};

}  // namespace megatts

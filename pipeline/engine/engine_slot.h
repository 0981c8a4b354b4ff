// engine_slot: one admitted utterance on the reference backend: its prompt, generator (talker +
// code predictor, kernels/reference/generator.h) and vocoder stream, and the rules that decide
// its next frame, exactly as pipeline/synthesis/utterance.h decides them, so that a session's
// frames equal synthesize()'s for the same request and seed:
//   - frame cap: the request's max_frames, else the model's max_new_tokens;
//   - runaway guard: max(k_runaway_min_frames, k_runaway_frames_per_token * text tokens);
//   - text track: non-streaming, tts_pad; streaming, frame f takes text token f + 1, then
//     tts_eos after the last, then tts_pad. While the text is still open and token f + 1 does
//     not exist yet, the slot waits (next() says so) rather than feed tts_pad, which would let
//     the model reach EOS before the sentence is complete.
//
// Contract: open() builds the prompt (streaming: from the head's ids and the first text token,
// which must exist; non-streaming: from the closed template) and runs the prefill, blocking
// (CPU work). next() and step() alternate on the engine thread. A GPU backend replaces this
// class; the engine's loop around it is where frames of all slots will be batched.
// Errors: open() fails with build_prompt's errors (empty text); step() with the vocoder's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernels/common/result.h"
#include "kernels/reference/generator.h"
#include "kernels/reference/vocoder/vocoder_stream.h"
#include "pipeline/engine/engine_job.h"
#include "pipeline/synthesis/reference_model.h"
#include "pipeline/synthesis/utterance.h"

namespace megatts {

class engine_slot {
public:
    using clock = std::chrono::steady_clock;

    static result<std::unique_ptr<engine_slot>> open(const reference_model& model,
                                                     std::span<const std::int32_t> tail_ids,
                                                     std::shared_ptr<engine_job> job);

    struct decision {
        enum class kind { run, wait, stop } what = kind::wait;
        std::int32_t text_id = 0;              // run: the frame's text-track id
        stop_reason stop = stop_reason::eos;   // stop: why
    };
    decision next() const;

    struct output {
        std::optional<ref::frame_codes> codes;  // nullopt: EOS, no frame
        std::vector<float> pcm;
        clock::time_point coded{}, vocoded{};
    };
    result<output> step(std::int32_t text_id);

    const engine_job& job() const { return *job_; }
    int frames() const { return frames_; }
    std::int64_t samples() const { return samples_; }
    int groups() const { return groups_; }
    int text_tokens() const { return text_tokens(job_->count()); }
    clock::duration compute() const { return compute_; }

private:
    engine_slot(const reference_model& model, std::shared_ptr<engine_job> job, prompt_plan plan);

    // Text tokens in `count`: all of them once closed, those so far while streaming.
    int text_tokens(engine_job::id_count count) const;

    std::shared_ptr<engine_job> job_;
    prompt_plan plan_;
    ref::generator generator_;
    ref::vocoder_stream vocoder_;
    int cap_;
    int groups_;
    std::int32_t tts_eos_;
    int frames_ = 0;
    std::int64_t samples_ = 0;
    clock::duration compute_{};
};

}  // namespace megatts

// engine_slot: one admitted utterance as the engine schedules it: its prompt, the backend slot
// it holds, how far it got, how far ahead of its listener it is, and the rules that decide its
// next frame, exactly as pipeline/synthesis/utterance.h decides them, so that a session's
// frames equal synthesize()'s for the same request and seed:
//   - frame cap: the request's max_frames, else the model's max_new_tokens, and never more
//     than the backend slot's positions hold after the prompt;
//   - runaway guard: max(k_runaway_min_frames, k_runaway_frames_per_token * text tokens);
//   - text track: non-streaming, tts_pad; streaming, frame f takes text token f + 1, then
//     tts_eos after the last, then tts_pad. While the text is still open and token f + 1 does
//     not exist yet, the slot waits (next() says so) rather than feed tts_pad, which would let
//     the model reach EOS before the sentence is complete.
// A whole text whose non-streaming prompt is longer than the backend takes in one go
// (backend_limits::max_prompt_rows, the megakernel's 128 rows) is spoken in the streaming
// layout instead, which the model also speaks; layout() and the end_of_audio say which.
//
// Lead: the audio generated minus the audio a real-time listener has played, where playback
// is taken to start when the first frame was delivered (the client's first audio follows
// within the encode and write, well under a frame). A frame and its samples count from its
// codes (the model's samples per frame), before its audio is delivered: in between it is in
// flight.
//
// Contract: open() builds the prompt (streaming: from the head's ids and the first text token,
// which must exist; non-streaming: from the closed template); the engine then opens the
// backend slot with prompt(). next(), frame_generated(), audio_delivered() and the accessors
// run on the engine thread.
// Errors: open() fails with build_prompt's errors (empty text) and with invalid_input when the
// prompt leaves no position for a frame.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "kernels/common/result.h"
#include "pipeline/engine/engine_backend.h"
#include "pipeline/engine/engine_job.h"
#include "pipeline/model/model_config.h"
#include "pipeline/synthesis/utterance.h"

namespace megatts {

class engine_slot {
public:
    using clock = std::chrono::steady_clock;

    static result<std::unique_ptr<engine_slot>> open(const model_config& config, std::span<const std::int32_t> tail_ids,
                                                     std::shared_ptr<engine_job> job, int index,
                                                     const backend_limits& limits);

    struct decision {
        enum class kind { run, wait, stop } what = kind::wait;
        std::int32_t text_id = 0;              // run: the frame's text-track id
        stop_reason stop = stop_reason::eos;   // stop: why
    };
    decision next() const;

    // The backend gave the next frame's codes; its audio is in flight until audio_delivered().
    void frame_generated();
    // The in-flight frame's audio was delivered at `at` (of the engine's playback clock).
    void audio_delivered(clock::time_point at);
    bool audio_in_flight() const { return in_flight_; }
    void add_compute(clock::duration d) { compute_ += d; }
    std::chrono::microseconds lead(clock::time_point now) const;
    // When lead() falls below `limit`.
    clock::time_point lead_below(std::chrono::microseconds limit) const;

    const engine_job& job() const { return *job_; }
    int index() const { return index_; }
    std::span<const prompt_row> prompt() const { return plan_.rows; }
    text_layout layout() const { return layout_; }
    int frames() const { return frames_; }
    std::int64_t samples() const { return samples_; }  // of the frames generated
    int groups() const { return groups_; }
    int text_tokens() const { return text_tokens(job_->count()); }
    clock::duration compute() const { return compute_; }

private:
    engine_slot(const model_config& config, std::shared_ptr<engine_job> job, int index, prompt_plan plan,
                text_layout layout, int cap);

    // Text tokens in `count`: all of them once closed, those so far while streaming.
    int text_tokens(engine_job::id_count count) const;
    std::chrono::microseconds generated() const;

    std::shared_ptr<engine_job> job_;
    int index_;
    prompt_plan plan_;
    text_layout layout_;
    int cap_;
    int groups_;
    int sample_rate_;
    int samples_per_frame_;
    std::int32_t tts_eos_;
    int frames_ = 0;
    bool in_flight_ = false;
    std::int64_t samples_ = 0;
    std::optional<clock::time_point> first_audio_;
    clock::duration compute_{};
};

}  // namespace megatts

// utterance: one whole-text utterance, frame by frame, on the CPU reference or on a given
// frame source and vocoder: tokenize the chat template, lay out the prompt, prefill, then
// per frame generate the 16 codes and vocode them into 1920 samples, handing each frame to
// the caller as soon as it exists. Times every stage.
//
// Contract: synthesize() blocks for the whole utterance (on the CPU, seconds per frame at
// full size) and calls on_frame(codes, pcm) once per frame on the calling
// thread. It stops at EOS, at request.max_frames, or at the runaway guard (a cap of
// frames per text token: random or confused models may never emit EOS). Unknown
// voice or language and empty text are invalid_input / not_found errors before any
// model work.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "kernels/common/result.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/synthesis/frame_source.h"
#include "pipeline/synthesis/frame_vocoder.h"
#include "pipeline/synthesis/reference_model.h"

namespace megatts {

// Frames allowed per text token before the runaway guard stops an utterance, plus a
// floor for very short texts. Speech runs at 2-6 frames per token; 10 is far past it.
inline constexpr int k_runaway_frames_per_token = 10;
inline constexpr int k_runaway_min_frames = 25;

struct utterance_request {
    std::string text;
    std::string voice;
    std::string language = "auto";
    text_layout layout = text_layout::non_streaming;
    sampling_request sampling;
    int max_frames = 0;  // 0: generation_config's max_new_tokens
};

enum class stop_reason { eos, max_frames, runaway_guard };

struct stage_times {
    using ms = std::chrono::duration<double, std::milli>;
    ms tokenize{}, prefill{}, generate{}, vocode{};
    ms first_frame{};  // from the start of synthesize() to the first frame's PCM
};

struct utterance_summary {
    int text_tokens = 0;
    int prompt_rows = 0;
    int frames = 0;
    stop_reason stop = stop_reason::eos;
    stage_times times;
};

using frame_sink = std::function<void(std::span<const std::int32_t> codes, std::span<const float> pcm)>;

// On the CPU reference backend.
result<utterance_summary> synthesize(const reference_model& model, const utterance_request& request,
                                     const frame_sink& on_frame);

// With frames from `source`, made for the same request (its sampling options), and samples
// from `vocoder`, fresh for this utterance; the model supplies the tokenizer and the prompt
// layout.
result<utterance_summary> synthesize(const reference_model& model, frame_source& source, frame_vocoder& vocoder,
                                     const utterance_request& request, const frame_sink& on_frame);

const char* stop_reason_name(stop_reason r);

}  // namespace megatts

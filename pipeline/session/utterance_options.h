// utterance_options: what a `start` asks for: voice, language, sampling and the audio format
// the client receives.
//
// Contract: a plain value. tts_session::start() checks it against the model and the ranges
// below before anything is queued (unknown_voice, unknown_language, invalid_argument).
#pragma once

#include <string>

#include "pipeline/model/generation_setup.h"

namespace megatts {

enum class audio_format {
    opus,   // one raw Opus packet per chunk, coded from 24 kHz mono (the decoder picks its rate)
    pcm16,  // little-endian signed 16-bit mono blocks at sample_rate
};

struct utterance_options {
    std::string voice;                // a speaker of the model (model_config::speakers)
    std::string language = "auto";    // "auto" or a language of the model
    sampling_request sampling;        // seed, greedy, temperature > 0, top_k >= 0, top_p in (0, 1]
    audio_format format = audio_format::opus;
    int sample_rate = 24000;          // pcm16: 8000..48000 (resampled when not 24000); opus: 24000
    int opus_frame_ms = 20;           // opus: 20 or 10
    int max_frames = 0;               // 0: the model's max_new_tokens; else at most that
    // The client plays the audio as it arrives, so generation need not run further ahead of
    // real time than the engine's lead limit (engine.h). Off for a client that wants the whole
    // utterance at once (an HTTP response).
    bool paced = true;
};

}  // namespace megatts

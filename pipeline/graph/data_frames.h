// data_frames: the payloads of the data class (frame_class.h): the content that flows from
// text to socket, in stream order, and is dropped on cancel.
//
// Contract: plain values, moved between stages and across threads inside a frame.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/reference/generator.h"
#include "pipeline/audio/opus_packet.h"
#include "pipeline/graph/frame_class.h"
#include "pipeline/telemetry/step_trace.h"

namespace megatts {

// A piece of the utterance's UTF-8 text as the client sent it (possibly cut inside a character).
struct text_chunk {
    static constexpr frame_class klass = frame_class::data;
    std::string text;
};

// Ids of the utterance's chat template (pipeline/stages/chat_template.h) that became final, in
// order: the prompt's role ids, the text tokens the talker's text track consumes, the tail.
struct text_tokens {
    static constexpr frame_class klass = frame_class::data;
    std::vector<std::int32_t> ids;
    bool last = false;  // these end the template: no id follows
};

// One frame of codec codes: codebook 0 from the talker, 1..groups-1 from the code predictor.
// A traced utterance's first k_traced_steps frames also carry the engine step that made them.
struct codec_frame {
    static constexpr frame_class klass = frame_class::data;
    ref::frame_codes codes{};
    int groups = 0;
    int index = 0;  // frame number in the utterance, from 0
    std::shared_ptr<const step_trace> step;
};

// Mono float samples, nominally in [-1, 1].
struct pcm_block {
    static constexpr frame_class klass = frame_class::data;
    std::vector<float> samples;
    int sample_rate = 0;
    std::int64_t first_sample = 0;  // index in the utterance at sample_rate
};

// One Opus packet of the utterance's stream (opus_packet.h: 24 kHz sample indices).
struct opus_packet_frame {
    static constexpr frame_class klass = frame_class::data;
    opus_packet packet;
    int frame_samples = 0;  // the packet's frame length at 24 kHz, padding included
};

// Little-endian signed 16-bit mono samples.
struct pcm16_block {
    static constexpr frame_class klass = frame_class::data;
    std::vector<std::uint8_t> bytes;
    int sample_rate = 0;
    std::int64_t first_sample = 0;
};

}  // namespace megatts

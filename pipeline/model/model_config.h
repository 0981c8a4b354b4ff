// model_config: everything megatts reads from a checkpoint's config.json,
// generation_config.json and speech_tokenizer/config.json.
//
// Contract: load() reads the three files of a Hugging Face checkpoint directory and
// validates them: every dimension and special id the model needs must be present
// and sensible (an absent key is an error naming the file and key, never a class
// default: the official defaults are wrong for the published checkpoints).
// parse() is the same check on the three files already read (the fuzz tests feed it bytes).
// The result is plain data, safe to share read-only between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kernels/common/model_dims.h"
#include "kernels/common/result.h"

namespace megatts {

class json_file;

enum class model_kind { custom_voice, base, voice_design };

// Text-vocabulary ids of the chat template and the text-track control tokens.
struct text_special_ids {
    std::int32_t im_start = 0;
    std::int32_t im_end = 0;
    std::int32_t assistant = 0;
    std::int32_t tts_pad = 0;
    std::int32_t tts_bos = 0;
    std::int32_t tts_eos = 0;
};

// Codec-vocabulary control ids (rows of the talker's codec embedding).
struct codec_special_ids {
    std::int32_t pad = 0;
    std::int32_t bos = 0;
    std::int32_t eos = 0;
    std::int32_t think = 0;
    std::int32_t nothink = 0;
    std::int32_t think_bos = 0;
    std::int32_t think_eos = 0;
};

// Sampling defaults of generation_config.json (talker and code predictor).
struct sampling_defaults {
    bool do_sample = true;
    float temperature = 1.f;
    int top_k = 0;
    float top_p = 1.f;
    float repetition_penalty = 1.f;
    bool sub_do_sample = true;
    float sub_temperature = 1.f;
    int sub_top_k = 0;
    float sub_top_p = 1.f;
    int max_new_tokens = 0;
};

struct model_config {
    model_kind kind = model_kind::custom_voice;
    std::string size_tag;  // "0b6" or "1b7"
    talker_dims talker;
    code_predictor_dims code_predictor;
    vocoder_dims vocoder;
    int max_positions = 0;  // talker max_position_embeddings: prompt + frames
    text_special_ids text_ids;
    codec_special_ids codec_ids;
    std::map<std::string, std::int32_t> languages;  // lower-case name -> codec id
    std::map<std::string, std::int32_t> speakers;   // lower-case name -> codec id
    std::map<std::string, std::string> speaker_dialect;  // speaker -> dialect language name
    sampling_defaults sampling;

    static result<model_config> load(const std::string& model_dir);
    static result<model_config> parse(const json_file& config, const json_file& generation_config,
                                      const json_file& vocoder_config);
};

std::string_view model_kind_name(model_kind kind);

}  // namespace megatts

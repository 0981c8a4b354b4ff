#include "pipeline/model/generation_setup.h"

namespace megatts {

ref::generation_options make_generation_options(const model_config& c, const sampling_request& r) {
    const auto& s = c.sampling;
    ref::generation_options o;
    o.seed = r.seed;
    o.talker = {.greedy = r.greedy || !s.do_sample,
                .temperature = r.temperature.value_or(s.temperature),
                .top_k = r.top_k.value_or(s.top_k),
                .top_p = r.top_p.value_or(s.top_p)};
    o.code_predictor = {.greedy = r.greedy || !s.sub_do_sample,
                        .temperature = r.temperature.value_or(s.sub_temperature),
                        .top_k = r.top_k.value_or(s.sub_top_k),
                        .top_p = r.top_p.value_or(s.sub_top_p)};
    // The official generate() fixes these for the talker (modeling_qwen3_tts.py):
    // EOS masked for the first 2 frames, every control id but EOS suppressed.
    o.processors = {.repetition_penalty = s.repetition_penalty,
                    .min_new_tokens = 2,
                    .eos = c.codec_ids.eos,
                    .suppress_begin = c.code_predictor.vocab,
                    .suppress_end = c.talker.codec_vocab};
    return o;
}

}  // namespace megatts

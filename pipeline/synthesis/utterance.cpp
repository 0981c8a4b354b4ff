#include "pipeline/synthesis/utterance.h"

#include <algorithm>

#include "pipeline/text/tts_prompt_ids.h"

namespace megatts {
namespace {

using clock = std::chrono::steady_clock;

}  // namespace

const char* stop_reason_name(stop_reason r) {
    switch (r) {
    case stop_reason::eos: return "eos";
    case stop_reason::max_frames: return "max_frames";
    case stop_reason::runaway_guard: return "runaway_guard";
    }
    return "unknown";
}

result<utterance_summary> synthesize(const reference_model& model, const utterance_request& request,
                                     const frame_sink& on_frame) {
    auto source = make_reference_frame_source(model.talker, model.code_predictor,
                                              make_generation_options(model.config(), request.sampling));
    auto vocoder = make_reference_frame_vocoder(model.vocoder);
    return synthesize(model, *source, *vocoder, request, on_frame);
}

result<utterance_summary> synthesize(const reference_model& model, frame_source& source, frame_vocoder& vocoder,
                                     const utterance_request& request, const frame_sink& on_frame) {
    const auto start = clock::now();
    const auto& config = model.config();
    if (request.text.empty()) return make_error(error_kind::invalid_input, "the text is empty");

    auto ids = tokenize_tts_prompt(model.tokenizer, request.text);
    if (!ids) return ids.err();
    auto plan = build_prompt(config, ids->ids, request.voice, request.language, request.layout);
    if (!plan) return plan.err();
    utterance_summary summary;
    summary.text_tokens = static_cast<int>(plan->text_ids.size());
    summary.prompt_rows = static_cast<int>(plan->rows.size());
    auto t = clock::now();
    summary.times.tokenize = t - start;

    MEGATTS_TRY(source.prefill(plan->rows));
    summary.times.prefill = clock::now() - t;

    const int cap = request.max_frames > 0 ? request.max_frames : config.sampling.max_new_tokens;
    const int guard = std::max(k_runaway_min_frames, k_runaway_frames_per_token * summary.text_tokens);
    const auto groups = static_cast<std::size_t>(config.talker.num_code_groups);
    summary.stop = stop_reason::max_frames;
    for (int frame = 0; frame < cap; ++frame) {
        if (frame == guard) {
            summary.stop = stop_reason::runaway_guard;
            break;
        }
        t = clock::now();
        auto next = source.next_frame(plan->text_track(frame));
        if (!next) return next.err();
        auto& codes = *next;
        auto generated = clock::now();
        summary.times.generate += generated - t;
        if (!codes) {
            summary.stop = stop_reason::eos;
            break;
        }
        auto frame_codes = std::span(*codes).first(groups);
        auto pcm = vocoder.decode(frame_codes);
        if (!pcm) return pcm.err();
        auto vocoded = clock::now();
        summary.times.vocode += vocoded - generated;
        if (frame == 0) summary.times.first_frame = vocoded - start;
        ++summary.frames;
        on_frame(frame_codes, *pcm);
    }
    return summary;
}

}  // namespace megatts

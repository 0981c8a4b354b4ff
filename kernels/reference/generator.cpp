#include "kernels/reference/generator.h"

#include "kernels/common/sampling_math.h"
#include "kernels/reference/code_predictor.h"

namespace megatts::ref {

generator::generator(const talker_weights& talker, const code_predictor_weights& cp,
                     generation_options options, generation_trace* trace)
    : talker_(talker), cp_(cp), options_(options), trace_(trace), state_(talker),
      hidden_(static_cast<std::size_t>(talker.dims.body.hidden)) {}

void generator::embed_row(const prompt_row& row, float* out) const {
    const int h = talker_.dims.body.hidden;
    for (int i = 0; i < h; ++i) out[i] = 0.f;
    if (row.text_id != prompt_row::none) project_text(talker_, row.text_id, out);
    if (row.codec_id != prompt_row::none) {
        const float* c = codec_embedding_row(talker_, row.codec_id);
        for (int i = 0; i < h; ++i) out[i] += c[i];
    }
}

void generator::prefill(std::span<const prompt_row> rows) {
    std::vector<float> x(hidden_.size());
    for (const auto& row : rows) {
        embed_row(row, x.data());
        layer_trace layer0;
        state_.step(x.data(), hidden_.data(), trace_ ? &layer0 : nullptr);
        if (trace_) {
            trace_->prefill_embeds.insert(trace_->prefill_embeds.end(), x.begin(), x.end());
            trace_->prefill_layer0.push_back(std::move(layer0));
        }
    }
}

std::optional<frame_codes> generator::next_frame(std::int32_t text_track_id) {
    const auto frame = static_cast<std::uint32_t>(history_.size());
    std::vector<float> logits(static_cast<std::size_t>(talker_.dims.codec_vocab));
    talker_logits(talker_, hidden_.data(), logits.data());
    if (trace_) {
        trace_->talker_hidden.insert(trace_->talker_hidden.end(), hidden_.begin(), hidden_.end());
        trace_->logits_raw.insert(trace_->logits_raw.end(), logits.begin(), logits.end());
    }
    apply_talker_processors(logits, history_, options_.processors);
    if (trace_) trace_->logits_processed.insert(trace_->logits_processed.end(), logits.begin(), logits.end());

    frame_codes codes{};
    codes[0] = choose_token(logits, options_.talker, sampling_uniform(options_.seed, frame, 0));
    if (codes[0] == options_.processors.eos) return std::nullopt;
    history_.push_back(codes[0]);

    std::vector<float> cp_logits;
    auto choose = [&](int pass, std::span<const float> l) {
        if (trace_) cp_logits.insert(cp_logits.end(), l.begin(), l.end());
        return choose_token(l, options_.code_predictor,
                            sampling_uniform(options_.seed, frame, static_cast<std::uint32_t>(pass + 1)));
    };
    code_predictor_frame(cp_, talker_, hidden_.data(), codes[0], choose, codes.data() + 1);

    std::vector<float> text(hidden_.size()), next(hidden_.size());
    project_text(talker_, text_track_id, text.data());
    frame_embedding(cp_, talker_, std::span(codes).first(static_cast<std::size_t>(talker_.dims.num_code_groups)),
                    text.data(), next.data());
    if (trace_) {
        trace_->cp_logits.push_back(std::move(cp_logits));
        trace_->frame_input_embeds.insert(trace_->frame_input_embeds.end(), next.begin(), next.end());
    }
    state_.step(next.data(), hidden_.data());
    return codes;
}

}  // namespace megatts::ref

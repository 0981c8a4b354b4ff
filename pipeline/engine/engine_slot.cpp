#include "pipeline/engine/engine_slot.h"

#include <algorithm>
#include <utility>

#include "pipeline/stages/chat_template.h"

namespace megatts {
namespace {

constexpr std::size_t k_overhead_ids = k_template_role_ids + k_template_tail_ids;

}  // namespace

result<std::unique_ptr<engine_slot>> engine_slot::open(const reference_model& model,
                                                       std::span<const std::int32_t> tail_ids,
                                                       std::shared_ptr<engine_job> job) {
    const auto start = clock::now();
    const auto& request = job->request();
    // Non-streaming: the whole template. Streaming: the prompt holds the first text token only,
    // so the head and that token, closed by the tail, make a template that lays out the same
    // rows; the rest of the text is read from the job frame by frame.
    std::vector<std::int32_t> ids = job->ids();
    if (request.layout == text_layout::streaming) {
        ids.resize(std::min(ids.size(), k_template_role_ids + 1));
        ids.insert(ids.end(), tail_ids.begin(), tail_ids.end());
    }
    auto plan = build_prompt(model.config(), ids, request.voice, request.language, request.layout);
    if (!plan) return plan.err();
    std::unique_ptr<engine_slot> slot(new engine_slot(model, std::move(job), std::move(plan.value())));
    slot->generator_.prefill(slot->plan_.rows);
    slot->compute_ += clock::now() - start;
    return slot;
}

engine_slot::engine_slot(const reference_model& model, std::shared_ptr<engine_job> job, prompt_plan plan)
    : job_(std::move(job)),
      plan_(std::move(plan)),
      generator_(model.talker, model.code_predictor, make_generation_options(model.config(), job_->request().sampling)),
      vocoder_(model.vocoder),
      cap_(job_->request().max_frames > 0 ? job_->request().max_frames : model.config().sampling.max_new_tokens),
      groups_(model.config().talker.num_code_groups),
      tts_eos_(model.config().text_ids.tts_eos) {}

int engine_slot::text_tokens(engine_job::id_count count) const {
    if (job_->request().layout == text_layout::non_streaming) return static_cast<int>(plan_.text_ids.size());
    const std::size_t overhead = count.closed ? k_overhead_ids : k_template_role_ids;
    return count.ids > overhead ? static_cast<int>(count.ids - overhead) : 0;
}

engine_slot::decision engine_slot::next() const {
    using kind = decision::kind;
    // One snapshot: the text may grow meanwhile, but only as one consistent step.
    const auto count = job_->count();
    if (frames_ == cap_) return {kind::stop, 0, stop_reason::max_frames};
    // While streaming text is open, frames stay below the tokens so far, far below the guard.
    const int tokens = text_tokens(count);
    if (frames_ == std::max(k_runaway_min_frames, k_runaway_frames_per_token * tokens))
        return {kind::stop, 0, stop_reason::runaway_guard};
    if (job_->request().layout == text_layout::non_streaming) return {kind::run, plan_.text_track(frames_), {}};

    const int wanted = frames_ + 1;  // frame f takes text token f + 1; token 0 is in the prompt
    if (wanted < tokens)
        return {kind::run, job_->id_at(k_template_role_ids + static_cast<std::size_t>(wanted)), {}};
    if (!count.closed) return {kind::wait, 0, {}};
    return {kind::run, wanted == tokens ? tts_eos_ : plan_.pad_text_id, {}};
}

result<engine_slot::output> engine_slot::step(std::int32_t text_id) {
    const auto start = clock::now();
    output out;
    out.codes = generator_.next_frame(text_id);
    out.coded = clock::now();
    if (out.codes) {
        auto pcm = vocoder_.decode(std::span(*out.codes).first(static_cast<std::size_t>(groups_)), 1);
        if (!pcm) return pcm.err();
        out.pcm = std::move(pcm.value());
        ++frames_;
        samples_ += static_cast<std::int64_t>(out.pcm.size());
    }
    out.vocoded = clock::now();
    compute_ += out.vocoded - start;
    return out;
}

}  // namespace megatts

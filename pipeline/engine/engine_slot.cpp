#include "pipeline/engine/engine_slot.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stages/chat_template.h"

namespace megatts {
namespace {

constexpr std::size_t k_overhead_ids = k_template_role_ids + k_template_tail_ids;

// The template a streaming prompt is built from: the head and the first text token, closed by
// the tail, lay out the same rows; the rest of the text is read from the job frame by frame.
std::vector<std::int32_t> streaming_template(std::vector<std::int32_t> ids, std::span<const std::int32_t> tail_ids) {
    ids.resize(std::min(ids.size(), k_template_role_ids + 1));
    ids.insert(ids.end(), tail_ids.begin(), tail_ids.end());
    return ids;
}

}  // namespace

result<std::unique_ptr<engine_slot>> engine_slot::open(const model_config& config,
                                                       std::span<const std::int32_t> tail_ids,
                                                       std::shared_ptr<engine_job> job, int index,
                                                       const backend_limits& limits) {
    const auto& request = job->request();
    auto layout = request.layout;
    std::vector<std::int32_t> ids = job->ids();
    if (layout == text_layout::streaming) ids = streaming_template(std::move(ids), tail_ids);
    auto plan = build_prompt(config, ids, request.voice, request.language, layout);
    if (!plan) return plan.err();
    if (limits.max_prompt_rows > 0 && static_cast<int>(plan->rows.size()) > limits.max_prompt_rows) {
        layout = text_layout::streaming;
        plan = build_prompt(config, streaming_template(std::move(ids), tail_ids), request.voice, request.language,
                            layout);
        if (!plan) return plan.err();
    }
    int cap = request.max_frames > 0 ? request.max_frames : config.sampling.max_new_tokens;
    if (limits.max_positions > 0) {
        const int room = limits.max_positions - static_cast<int>(plan->rows.size());
        if (room < 1)
            return make_error(error_kind::invalid_input, "the prompt's " + std::to_string(plan->rows.size()) +
                                                             " positions fill a slot of " +
                                                             std::to_string(limits.max_positions));
        cap = std::min(cap, room);
    }
    return std::unique_ptr<engine_slot>(
        new engine_slot(config, std::move(job), index, std::move(plan.value()), layout, cap));
}

engine_slot::engine_slot(const model_config& config, std::shared_ptr<engine_job> job, int index, prompt_plan plan,
                         text_layout layout, int cap)
    : job_(std::move(job)),
      index_(index),
      plan_(std::move(plan)),
      layout_(layout),
      cap_(cap),
      groups_(config.talker.num_code_groups),
      sample_rate_(config.vocoder.output_sample_rate),
      samples_per_frame_(config.vocoder.samples_per_frame()),
      tts_eos_(config.text_ids.tts_eos) {}

int engine_slot::text_tokens(engine_job::id_count count) const {
    if (layout_ == text_layout::non_streaming) return static_cast<int>(plan_.text_ids.size());
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
    if (layout_ == text_layout::non_streaming) return {kind::run, plan_.text_track(frames_), {}};

    const int wanted = frames_ + 1;  // frame f takes text token f + 1; token 0 is in the prompt
    if (wanted < tokens)
        return {kind::run, job_->id_at(k_template_role_ids + static_cast<std::size_t>(wanted)), {}};
    if (!count.closed) return {kind::wait, 0, {}};
    return {kind::run, wanted == tokens ? tts_eos_ : plan_.pad_text_id, {}};
}

void engine_slot::frame_generated() {
    ++frames_;
    samples_ += samples_per_frame_;
    in_flight_ = true;
}

void engine_slot::audio_delivered(clock::time_point at) {
    if (!first_audio_) first_audio_ = at;
    in_flight_ = false;
}

std::chrono::microseconds engine_slot::generated() const {
    return std::chrono::microseconds(samples_ * 1'000'000 / sample_rate_);
}

std::chrono::microseconds engine_slot::lead(clock::time_point now) const {
    if (!first_audio_) return generated();  // nothing played yet
    return generated() - std::chrono::duration_cast<std::chrono::microseconds>(now - *first_audio_);
}

engine_slot::clock::time_point engine_slot::lead_below(std::chrono::microseconds limit) const {
    // lead(t) = generated - (t - first audio): below the limit just after first + generated - limit.
    return first_audio_.value_or(clock::time_point{}) + generated() - limit + std::chrono::microseconds(1);
}

}  // namespace megatts

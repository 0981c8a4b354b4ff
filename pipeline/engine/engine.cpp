#include "pipeline/engine/engine.h"

#include <algorithm>
#include <utility>

#include "pipeline/stages/chat_template.h"

namespace megatts {
namespace {

using clock = std::chrono::steady_clock;

frame make_frame(const engine_job& job, clock::time_point at, frame_payload payload) {
    frame_header h = job.header();
    h.created = at;
    return frame{h, std::move(payload)};
}

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The job's client while it still wants the job: not gone, not cancelled, job not abandoned.
std::shared_ptr<engine_client> wanted(const engine_job& job) {
    auto client = job.client();
    if (!client || job.abandoned() || !client->current(job.header().epoch)) return nullptr;
    return client;
}

}  // namespace

result<std::unique_ptr<engine>> engine::create(const reference_model& model, int max_jobs,
                                               const pipeline_metrics& metrics) {
    auto tail = model.tokenizer.encode(k_template_tail);
    if (!tail) return tail.err();
    if (tail->size() != k_template_tail_ids)
        return make_error(error_kind::mismatch, "the tokenizer splits the chat template's tail into " +
                                                    std::to_string(tail->size()) + " ids, not " +
                                                    std::to_string(k_template_tail_ids));
    return std::unique_ptr<engine>(new engine(model, max_jobs, metrics, std::move(tail.value())));
}

engine::engine(const reference_model& model, int max_jobs, const pipeline_metrics& metrics,
               std::vector<std::int32_t> tail_ids)
    : model_(model),
      max_jobs_(max_jobs),
      metrics_(metrics),
      tail_ids_(std::move(tail_ids)),
      sample_rate_(model.config().vocoder.output_sample_rate),
      thread_([this] { run(); }) {}

engine::~engine() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
    metrics_.engine_active->add(-static_cast<double>(active_.size()));
}

bool engine::submit(std::shared_ptr<engine_job> job) {
    {
        std::lock_guard lock(mutex_);
        // Jobs nobody wants any more do not hold a place (nor memory: unwanted ones are pruned).
        std::erase_if(submitted_, [](const auto& waiting) { return !wanted(*waiting); });
        const auto held = submitted_.size() + static_cast<std::size_t>(std::count_if(
                                                  taken_.begin(), taken_.end(), [](const auto& t) { return wanted(*t); }));
        if (static_cast<int>(held) >= max_jobs_) return false;
        submitted_.push_back(std::move(job));
        ++wakes_;
    }
    wake_.notify_one();
    return true;
}

void engine::wake() {
    {
        std::lock_guard lock(mutex_);
        ++wakes_;
    }
    wake_.notify_one();
}

void engine::run() {
    for (;;) {
        std::vector<std::shared_ptr<engine_job>> arrived;
        std::uint64_t seen = 0;
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
            arrived.swap(submitted_);
            taken_.insert(taken_.end(), arrived.begin(), arrived.end());
            seen = wakes_;
        }
        for (auto& job : arrived) admit(std::move(job));
        const bool progressed = round() || !arrived.empty();
        std::unique_lock lock(mutex_);
        if (!progressed) wake_.wait(lock, [&] { return stopping_ || wakes_ != seen; });
    }
}

void engine::admit(std::shared_ptr<engine_job> job) {
    auto client = wanted(*job);
    if (!client) {
        release(*job);
        return;
    }
    const auto admitted = clock::now();
    auto slot = engine_slot::open(model_, tail_ids_, job);
    if (!slot) {
        release(*job);
        // The session checked voice, language and text before submitting: this is a bug.
        client->deliver(make_frame(*job, clock::now(), error_report{{session_errc::internal, slot.err().message}}));
        return;
    }
    client->deliver(make_frame(*job, admitted, mark_report{ttfa_mark::admitted}));
    client->deliver(make_frame(*job, clock::now(), mark_report{ttfa_mark::prefill_done}));
    active_.push_back(std::move(slot.value()));
    metrics_.engine_active->add(1);
}

bool engine::round() {
    bool progressed = false;
    std::vector<std::unique_ptr<engine_slot>> kept;
    kept.reserve(active_.size());
    for (auto& slot : active_) {
        auto client = wanted(slot->job());
        const auto outcome = client ? turn(*slot, *client) : turn_outcome::finished;
        progressed |= outcome != turn_outcome::idle;
        if (outcome == turn_outcome::finished) {
            if (!client) release(slot->job());  // turn() released the ones it finished
            metrics_.engine_active->add(-1);
        } else {
            kept.push_back(std::move(slot));
        }
    }
    active_ = std::move(kept);
    return progressed;
}

engine::turn_outcome engine::turn(engine_slot& slot, engine_client& client) {
    if (!client.ready_for_frame()) return turn_outcome::idle;
    const auto decision = slot.next();
    if (decision.what == engine_slot::decision::kind::wait) return turn_outcome::idle;
    if (decision.what == engine_slot::decision::kind::stop) {
        finish(slot, client, decision.stop);
        return turn_outcome::finished;
    }
    const auto start = clock::now();
    auto out = slot.step(decision.text_id);
    if (!out) {
        release(slot.job());
        client.deliver(make_frame(slot.job(), clock::now(), error_report{{session_errc::internal, out.err().message}}));
        return turn_outcome::finished;
    }
    if (!out->codes) {
        finish(slot, client, stop_reason::eos);
        return turn_outcome::finished;
    }
    const auto& job = slot.job();
    if (slot.frames() == 1) {
        client.deliver(make_frame(job, out->coded, mark_report{ttfa_mark::first_code0}));
        client.deliver(make_frame(job, out->coded, mark_report{ttfa_mark::first_frame}));
        client.deliver(make_frame(job, out->vocoded, mark_report{ttfa_mark::first_pcm}));
    }
    const int index = slot.frames() - 1;
    const auto samples = static_cast<std::int64_t>(out->pcm.size());
    client.deliver(make_frame(job, out->coded, codec_frame{*out->codes, slot.groups(), index}));
    client.deliver(make_frame(job, out->vocoded, pcm_block{std::move(out->pcm), sample_rate_, slot.samples() - samples}));
    metrics_.engine_frame->observe(seconds(out->vocoded - start));
    metrics_.audio_seconds->add(static_cast<double>(samples) / sample_rate_);
    return turn_outcome::advanced;
}

void engine::finish(engine_slot& slot, engine_client& client, stop_reason stop) {
    release(slot.job());  // before the client hears of the end, so its next job finds room
    client.deliver(make_frame(slot.job(), clock::now(),
                              end_of_audio{stop, slot.job().request().layout, slot.text_tokens(), slot.frames(),
                                           slot.samples(), slot.compute()}));
}

void engine::release(const engine_job& job) {
    std::lock_guard lock(mutex_);
    std::erase_if(taken_, [&](const auto& t) { return t.get() == &job; });
}

}  // namespace megatts

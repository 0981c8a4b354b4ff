#include "pipeline/engine/engine.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "pipeline/model/generation_setup.h"
#include "pipeline/stages/chat_template.h"

namespace megatts {
namespace {

using clock = std::chrono::steady_clock;

// The shortest sleep while a paced job waits for its listener: a clock that does not move
// (tests) must not make the thread spin, and a frame is 80 ms, so 1 ms costs nothing.
constexpr std::chrono::milliseconds k_min_pacing_sleep{1};

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

error_report job_error(session_errc code, std::string message) { return error_report{{code, std::move(message)}}; }

// An error of one job's request (what the backend cannot run for it), or a bug.
session_errc errc_of(const error& e) {
    return e.kind == error_kind::invalid_input ? session_errc::invalid_argument : session_errc::internal;
}

batch_policy policy_of(const backend_limits& limits, const engine_settings& settings) {
    return {.max_batch = settings.max_batch > 0 ? std::min(settings.max_batch, limits.max_batch) : limits.max_batch,
            .max_rows = limits.max_rows,
            .lead_limit = settings.lead_limit,
            .yield_lead = settings.first_audio_yield,
            .join_lead = settings.join_lead};
}

// A backend call: the host times around it, and the GPU's inside them. A device time outside
// the call is the mapping's error (launch_timer.h), as the call blocks until its GPU work is
// done; it is clamped into the call.
backend_call timed_call(clock::time_point begin, clock::time_point end, std::optional<host_span> device, int items) {
    backend_call call{.host = {begin, end}, .items = items};
    if (device) {
        const auto inside = [&](clock::time_point t) { return std::clamp(t, begin, end); };
        call.device = host_span{inside(device->begin), inside(std::max(device->begin, device->end))};
    }
    return call;
}

clock::time_point finished_at(const backend_call& call) { return call.device ? call.device->end : call.host.end; }

}  // namespace

std::string engine_failure_message(const std::string& reason) {
    return "the synthesis engine failed (" + reason + "); the server restarts";
}

result<std::unique_ptr<engine>> engine::create(const reference_model& model, std::unique_ptr<engine_backend> backend,
                                               const engine_settings& settings, const pipeline_metrics& metrics,
                                               hooks h) {
    auto tail = model.tokenizer.encode(k_template_tail);
    if (!tail) return tail.err();
    if (tail->size() != k_template_tail_ids)
        return make_error(error_kind::mismatch, "the tokenizer splits the chat template's tail into " +
                                                    std::to_string(tail->size()) + " ids, not " +
                                                    std::to_string(k_template_tail_ids));
    const auto limits = backend->limits();
    if (limits.slots < 1 || limits.max_batch < 1)
        return make_error(error_kind::invalid_input, "engine: the backend needs at least one slot and one item per batch");
    if (!h.playback_clock) h.playback_clock = [] { return clock::now(); };
    return std::unique_ptr<engine>(
        new engine(model, std::move(backend), settings, metrics, std::move(h), std::move(tail.value())));
}

engine::engine(const reference_model& model, std::unique_ptr<engine_backend> backend, const engine_settings& settings,
               const pipeline_metrics& metrics, hooks h, std::vector<std::int32_t> tail_ids)
    : model_(model),
      backend_(std::move(backend)),
      limits_(backend_->limits()),
      policy_(policy_of(limits_, settings)),
      metrics_(metrics),
      hooks_(std::move(h)),
      choice_margin_(settings.choice_margin),
      tail_ids_(std::move(tail_ids)),
      sample_rate_(model.config().vocoder.output_sample_rate),
      free_slots_(static_cast<std::size_t>(limits_.slots)),
      thread_([this] { run(); }) {
    // Lowest index first out: slot 0 is the first one taken.
    std::iota(free_slots_.rbegin(), free_slots_.rend(), 0);
}

engine::~engine() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
    metrics_.engine_active->add(-static_cast<double>(active_.size()));
}

engine::admission engine::submit(std::shared_ptr<engine_job> job) {
    // The clients asked whether they still want their jobs. Declared before the lock so that
    // they are let go after it: where ours is the last reference, a session's destructor runs,
    // and it may call back into the engine.
    std::vector<std::shared_ptr<engine_client>> asked;
    {
        std::lock_guard lock(mutex_);
        if (failure_) return admission::failed;
        const auto slots = static_cast<std::size_t>(limits_.slots);
        if (submitted_.size() + taken_.size() >= slots) {
            // At the limit only the jobs still wanted count (see Admission in engine.h).
            auto still_wanted = [&](const std::shared_ptr<engine_job>& held) {
                asked.push_back(wanted(*held));
                return asked.back() != nullptr;
            };
            std::erase_if(submitted_, [&](const auto& held) { return !still_wanted(held); });
            const auto counted = std::count_if(taken_.begin(), taken_.end(), still_wanted);
            if (submitted_.size() + static_cast<std::size_t>(counted) >= slots) return admission::full;
        }
        submitted_.push_back(std::move(job));
        ++wakes_;
    }
    wake_.notify_one();
    return admission::accepted;
}

void engine::wake() {
    {
        std::lock_guard lock(mutex_);
        ++wakes_;
    }
    wake_.notify_one();
}

std::optional<std::string> engine::failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
}

void engine::release_reservation(const engine_job& job) {
    std::lock_guard lock(mutex_);
    std::erase_if(taken_, [&](const auto& held) { return held.get() == &job; });
}

std::chrono::steady_clock::duration engine::busy_for() const {
    const auto since = busy_since_.load(std::memory_order_relaxed);
    if (since == 0) return clock::duration::zero();
    return std::max(clock::now() - clock::time_point(clock::duration(since)), clock::duration::zero());
}

void engine::busy_from_now() { busy_since_.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed); }

void engine::idle() { busy_since_.store(0, std::memory_order_relaxed); }

std::optional<clock::time_point> engine::choice_time() const {
    if (!vocoding_ || choice_margin_ <= clock::duration::zero()) return std::nullopt;
    const auto due = forecast_.due(vocoding_->started, static_cast<int>(vocoding_->frames.size()));
    if (!due) return std::nullopt;
    return *due - choice_margin_;
}

void engine::run() {
    for (;;) {
        std::vector<std::shared_ptr<engine_job>> arrived;
        std::uint64_t seen = 0;
        bool stop = false;
        const auto choose_at = choice_time();
        if (!choose_at) idle();  // a failed engine waits here, idle; a late choice is the step's
        {
            std::unique_lock lock(mutex_);
            // A failed engine only waits to be stopped: its backend is unusable.
            wake_.wait(lock, [&] { return stopping_ || !failure_; });
            // Late choice: arrivals are admitted as they come until the next step is chosen.
            if (choose_at) wake_.wait_until(lock, *choose_at, [&] { return stopping_ || !submitted_.empty(); });
            stop = stopping_;
            if (!stop) {
                arrived.swap(submitted_);
                taken_.insert(taken_.end(), arrived.begin(), arrived.end());
                seen = wakes_;
            }
        }
        if (stop) {
            (void)deliver_audio({});  // what the GPU computed still reaches its sessions; errors end nothing more
            return;
        }
        std::size_t taken = 0;
        result<void> admitted{};
        const auto admitting = clock::now();
        while (admitted && taken < arrived.size()) {
            busy_from_now();
            admitted = admit(arrived[taken++]);
        }
        if (!arrived.empty()) metrics_.engine_host_admit->observe(seconds(clock::now() - admitting));
        if (!admitted) {
            // The job whose admission failed and those behind it have not been told yet.
            fail(admitted.err().message, std::span(arrived).subspan(taken - 1));
            continue;
        }
        if (choose_at && clock::now() < *choose_at) continue;  // more may arrive before the choice
        std::optional<clock::time_point> wake_at;
        busy_from_now();
        auto stepped = step(wake_at);
        if (!stepped) {
            fail(stepped.err().message, {});
            continue;
        }
        if (*stepped || !arrived.empty()) continue;
        // Here no audio is in flight: a step that runs nothing delivers it (and counts as progress).
        idle();
        std::unique_lock lock(mutex_);
        auto woken = [&] { return stopping_ || wakes_ != seen; };
        if (!wake_at) {
            wake_.wait(lock, woken);
        } else {
            const auto delay = std::max<clock::duration>(*wake_at - hooks_.playback_clock(), k_min_pacing_sleep);
            wake_.wait_for(lock, delay, woken);
        }
    }
}

result<void> engine::admit(const std::shared_ptr<engine_job>& job) {
    auto client = wanted(*job);
    if (!client) {
        release_reservation(*job);
        return {};
    }
    // submit() counted only wanted jobs, so a slot may still be held by one nobody wants.
    if (free_slots_.empty()) drop_unwanted();
    if (free_slots_.empty()) {
        // Every slot holds a job wanted now: then this one was given up meanwhile, since submit()
        // never lets in more wanted jobs than slots. Said, should that ever not hold.
        release_reservation(*job);
        if (wanted(*job))
            client->deliver(make_frame(*job, clock::now(), job_error(session_errc::internal, "no free engine slot")));
        return {};
    }
    const auto admitted = clock::now();
    const int index = free_slots_.back();
    auto slot = engine_slot::open(model_.config(), tail_ids_, job, index, limits_);
    if (!slot) {
        release_reservation(*job);
        client->deliver(make_frame(*job, clock::now(), job_error(errc_of(slot.err()), slot.err().message)));
        return {};
    }
    auto opened = backend_->open(index, (*slot)->prompt(), make_generation_options(model_.config(), job->request().sampling));
    if (!opened) {
        if (backend_->failed()) return opened.err();
        backend_->release(index);
        release_reservation(*job);
        client->deliver(make_frame(*job, clock::now(), job_error(errc_of(opened.err()), opened.err().message)));
        return {};
    }
    free_slots_.pop_back();
    const auto prefilled = clock::now();
    (*slot)->add_compute(prefilled - admitted);
    client->deliver(make_frame(*job, admitted, mark_report{ttfa_mark::admitted}));
    client->deliver(make_frame(*job, prefilled, mark_report{ttfa_mark::prefill_done}));
    active_.push_back(std::move(slot.value()));
    metrics_.engine_active->add(1);
    return {};
}

result<bool> engine::step(std::optional<clock::time_point>& wake_at) {
    const auto entered = clock::now();
    const auto now = hooks_.playback_clock();
    bool progressed = false;
    std::vector<runner> runnable;
    std::vector<batch_candidate> candidates;
    for (auto& held : active_) {
        auto& slot = *held;
        auto client = wanted(slot.job());
        if (!client) {
            leave(slot);
            continue;
        }
        const auto in_flight = slot.audio_in_flight();
        if (!client->ready_for_frames(k_frames_per_step + (in_flight ? k_frames_in_flight : 0))) continue;
        const auto decision = slot.next();
        if (decision.what == engine_slot::decision::kind::wait) continue;
        if (decision.what == engine_slot::decision::kind::stop) {
            // The end follows the last frame's audio: at the next step, once that is delivered.
            if (in_flight) continue;
            finish(slot, *client, decision.stop);
            progressed = true;
            continue;
        }
        const bool first = slot.frames() == 0;
        batch_candidate c{.first_frame = first,
                          .lead = slot.lead(now),
                          .paced = slot.job().request().paced,
                          .rows = first && limits_.prefill_in_step ? static_cast<int>(slot.prompt().size()) : 1};
        auto wake_when_below = [&](std::chrono::microseconds lead) {
            const auto at = slot.lead_below(lead);
            wake_at = wake_at ? std::min(*wake_at, at) : at;
        };
        if (lead_limited(c, policy_)) {
            wake_when_below(policy_.lead_limit);
            continue;
        }
        // Should no step run now, the engine steps once this job calls for one.
        if (!calls_for_step(c, policy_)) wake_when_below(policy_.join_lead);
        runnable.push_back({&slot, std::move(client), decision.text_id});
        candidates.push_back(c);
    }
    std::vector<runner> batch;
    for (auto i : pick_batch(candidates, policy_)) batch.push_back(std::move(runnable[i]));
    if (!batch.empty()) {
        metrics_.engine_left_out->observe(static_cast<double>(runnable.size() - batch.size()));
        metrics_.engine_host_schedule->observe(seconds(clock::now() - entered));
    }
    if (batch.empty() && vocoding_) {
        // Nothing runs for the audio in flight to be delivered under: it is delivered now.
        if (auto delivered = deliver_audio({}); !delivered) return delivered.err();
        progressed = true;
    }
    auto ran = batch.empty() ? result<void>{} : run_batch(batch);
    std::erase_if(active_, [](const auto& slot) { return !slot; });  // those that left
    left_.clear();
    if (!ran) return ran.err();
    return progressed || !batch.empty();
}

result<void> engine::run_batch(std::span<const runner> batch) {
    step_trace trace{.step = ++steps_};
    std::vector<generate_item> items;
    for (const auto& r : batch) {
        items.push_back({r.slot->index(), r.slot->frames(), r.text_id});
        const bool prefill = limits_.prefill_in_step && r.slot->frames() == 0;
        trace.rows += prefill ? static_cast<int>(r.slot->prompt().size()) : 1;
        trace.prefill += prefill ? 1 : 0;
    }
    std::vector<std::optional<ref::frame_codes>> codes(batch.size());
    const auto start = clock::now();
    // The last step's audio is collected and delivered, and its sessions woken, while the GPU
    // runs this step (or, should generate() fail before it could, right after).
    result<void> delivered{};
    auto generated = backend_->generate(items, codes, [&] { delivered = deliver_audio(start); });
    if (delivered && vocoding_) delivered = deliver_audio(start);
    if (!delivered) return delivered.err();
    if (!generated) return backend_error(batch, generated.err());
    const auto coded = clock::now();
    trace.generate = timed_call(start, coded, backend_->last_device_span(), static_cast<int>(items.size()));

    // This step's audio starts at once; the jobs' ends, the arrivals' admission and the next
    // step's choice and launch overlap it, and the next step's generate() delivers it.
    vocoding v{.trace = trace, .began = start, .coded = coded, .batch = static_cast<long>(batch.size())};
    std::vector<vocode_item> frames;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!codes[i]) continue;
        frames.push_back({batch[i].slot->index(), *codes[i]});
        v.frames.push_back({batch[i].slot, batch[i].client,
                            codec_frame{*codes[i], batch[i].slot->groups(), batch[i].slot->frames(), nullptr},
                            batch[i].slot->samples()});
    }
    v.started = clock::now();
    if (!frames.empty()) {
        if (auto started = backend_->start_vocode(frames); !started) return backend_error(batch, started.err());
    }
    // Every job of the batch shares the step's time (deliver_audio()); one that ends here, its
    // generate() call's.
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (codes[i]) continue;
        batch[i].slot->add_compute((coded - start) / v.batch);
        finish(*batch[i].slot, *batch[i].client, stop_reason::eos);
    }
    for (auto& f : v.frames) f.slot->frame_generated();
    if (!v.frames.empty()) vocoding_ = std::move(v);
    metrics_.engine_batch->observe(static_cast<double>(batch.size()));
    metrics_.engine_generate->observe(seconds(coded - start));
    if (const auto& gpu = trace.generate.device) metrics_.engine_generate_gpu->observe(seconds(gpu->end - gpu->begin));
    metrics_.engine_rows->observe(static_cast<double>(trace.rows));
    return {};
}

result<void> engine::deliver_audio(std::optional<clock::time_point> next_step) {
    if (!vocoding_) return {};
    vocoding v = std::move(*vocoding_);
    vocoding_.reset();
    std::vector<std::vector<float>> pcm(v.frames.size());
    if (auto finished = backend_->finish_vocode(pcm); !finished) return finished.err();
    const auto vocoded = clock::now();
    v.trace.vocode = timed_call(v.started, vocoded, backend_->last_device_span(), static_cast<int>(pcm.size()));
    if (const auto& gpu = v.trace.vocode.device) forecast_.record(static_cast<int>(pcm.size()), gpu->end - gpu->begin);
    // Steps tile the engine's busy time: a step lasts until the next one begins, if one follows
    // at once (its generate() waits on the GPU for this audio), and its jobs share that time.
    const auto step = next_step.value_or(vocoded) - v.began;
    const auto share = step / v.batch;
    // The marks take the GPU's times where the backend measured them (DESIGN.md §1).
    const auto code_ready = finished_at(v.trace.generate);
    const auto pcm_ready = finished_at(v.trace.vocode);
    std::shared_ptr<const step_trace> shared;
    const auto played_from = hooks_.playback_clock();
    for (std::size_t i = 0; i < v.frames.size(); ++i) {
        auto& [slot, client, made, first_sample] = v.frames[i];
        const auto& job = slot->job();
        if (made.index == 0) {
            client->queue(make_frame(job, code_ready, mark_report{ttfa_mark::first_code0}));
            client->queue(make_frame(job, code_ready, mark_report{ttfa_mark::first_frame}));
            client->queue(make_frame(job, pcm_ready, mark_report{ttfa_mark::first_pcm}));
        }
        if (job.request().trace && made.index < k_traced_steps) {
            if (!shared) shared = std::make_shared<const step_trace>(v.trace);
            made.step = shared;
        }
        const auto samples = static_cast<std::int64_t>(pcm[i].size());
        client->queue(make_frame(job, v.coded, std::move(made)));
        client->queue(make_frame(job, vocoded, pcm_block{std::move(pcm[i]), sample_rate_, first_sample}));
        client->wake();
        slot->audio_delivered(played_from);
        slot->add_compute(share);
        metrics_.audio_seconds->add(static_cast<double>(samples) / sample_rate_);
    }
    metrics_.engine_frame->observe(seconds(step));
    metrics_.engine_vocode->observe(seconds(vocoded - v.started));
    if (const auto& gpu = v.trace.vocode.device) metrics_.engine_vocode_gpu->observe(seconds(gpu->end - gpu->begin));
    metrics_.engine_host_deliver->observe(seconds(clock::now() - vocoded));
    return {};
}

result<void> engine::backend_error(std::span<const runner> batch, const error& e) {
    if (backend_->failed()) return e;
    for (const auto& r : batch) {
        leave(*r.slot);
        r.client->deliver(make_frame(r.slot->job(), clock::now(), job_error(session_errc::internal, e.message)));
    }
    return {};
}

void engine::leave(engine_slot& slot) {
    for (auto& held : active_) {
        if (held.get() != &slot) continue;
        backend_->release(slot.index());
        free_slots_.push_back(slot.index());
        metrics_.engine_active->add(-1);
        release_reservation(slot.job());
        left_.push_back(std::move(held));
        return;
    }
}

void engine::drop_unwanted() {
    for (auto& held : active_) {
        if (held && !wanted(held->job())) leave(*held);
    }
    std::erase_if(active_, [](const auto& slot) { return !slot; });  // those that left
}

void engine::finish(engine_slot& slot, engine_client& client, stop_reason stop) {
    // Free first: the session submits its next utterance as soon as it sees the end.
    leave(slot);
    client.deliver(make_frame(slot.job(), clock::now(),
                              end_of_audio{stop, slot.layout(), slot.text_tokens(), slot.frames(), slot.samples(),
                                           slot.compute()}));
}

void engine::fail(const std::string& reason, std::span<const std::shared_ptr<engine_job>> unadmitted) {
    vocoding_.reset();  // the backend is unusable: the audio in flight is lost with it
    std::vector<std::shared_ptr<engine_job>> waiting(unadmitted.begin(), unadmitted.end());
    {
        std::lock_guard lock(mutex_);
        failure_ = reason;
        waiting.insert(waiting.end(), submitted_.begin(), submitted_.end());
        submitted_.clear();
        taken_.clear();
    }
    metrics_.engine_failed->set(1);
    const std::string told = engine_failure_message(reason);
    auto tell = [&](const engine_job& job) {
        if (auto client = wanted(job)) client->deliver(make_frame(job, clock::now(), job_error(session_errc::engine_failed, told)));
    };
    for (const auto& slot : active_) tell(slot->job());
    for (const auto& job : waiting) tell(*job);
    metrics_.engine_active->add(-static_cast<double>(active_.size()));
    active_.clear();
    if (hooks_.on_failure) hooks_.on_failure(reason);
}

}  // namespace megatts

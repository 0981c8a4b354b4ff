// engine: the one thread that owns the model backend and runs every session's utterances,
// batched (DESIGN.md §1: all model work goes through one engine thread; continuous batching).
//
// Loop: each step it admits the jobs submitted since the last step (builds the prompt and
// opens a backend slot; marks admitted and prefill_done), drops the jobs their sessions no
// longer want, ends those that are done, and asks batch_scheduler.h which of the rest take a
// frame now; those go to the backend in ONE generate() (one megakernel launch on CUDA), and
// their audio in one start_vocode() at once; each gets codec_frame and pcm_block (marks
// first_code0, first_frame, first_pcm on its first). The step's frames are delivered, and their
// sessions woken, during the next step's generate() (its meanwhile: on CUDA, while the GPU runs
// that step), or, when no step follows at once, before the thread sleeps or stops: the jobs'
// ends, the arrivals' admission and the next step's choice and launch overlap the audio's GPU
// work, and collecting the audio and waking a hundred sessions' strands overlap the next
// step's, where they used to keep the GPU idle about 0.7 ms a step (bench/RESULTS.md,
// 2026-12-01). A job's next frame may so be chosen while its last one's audio is in flight: it
// then asks its session for room for both (engine_client.h), and a job that reaches its frame
// cap or runaway guard ends once that audio is delivered. Late choice: the next step is chosen
// settings.choice_margin before the audio in flight is due (vocode_forecast.h; jobs submitted
// until then are admitted as they come), not as the audio starts, so that a job submitted while
// a loaded step's audio is computed (a third of the step) joins the next step instead of the
// one after. New jobs join the running batch at the next step; finished and cancelled ones
// leave it at the next step. A job does not go when:
//   - its client cancelled it or is gone: dropped at once, its backend slot freed (its
//     in-flight output is discarded by the session, which moved to a new epoch);
//   - its client is not ready_for_frames(): output queue full, or stalled by a slow transport
//     (backpressure: a slow consumer costs the engine nothing);
//   - it streams text and the next text token has not arrived (engine_slot.h);
//   - it is paced and settings.lead_limit ahead of its listener (batch_scheduler.h), until
//     playback catches up: the thread sleeps until the first such job may go again;
//   - the scheduler leaves it for a later step (first audio of another job, batch full);
//   - it is paced, settings.join_lead ahead, and no job that calls for a step can go: the
//     thread sleeps until one can (batch_scheduler.h).
// A job ends with end_of_audio (stop reason, frames, compute time) or an error_report. When no
// job can go the thread sleeps until submit() or wake() (or a paced job's time).
//
// Admission: the backend has limits().slots slots (KV caches, vocoder states); submit()
// reserves one or answers full (the session's answer is engine_full: 1013 / 503). Only jobs
// their sessions still want count against the slots: a job cancelled or whose session is gone
// stops counting at once, though the engine frees its backend slot only at its next step or
// admission, and a finished job stops counting before its client hears of the end. So a
// session that cancels, or sees its utterance end, and starts the next one at once finds room
// whenever it had room before.
//
// Failure: an error after which the backend reports failed() (a CUDA error) moves the engine to
// FAILED for good: every job it holds or is handed gets an error_report (engine_failed), submit()
// answers failed, failure() names the error, and hooks.on_failure runs once on the engine
// thread (the daemon then reports unhealthy and exits non-zero). Any other backend error ends
// only the jobs of that step (internal).
//
// On the reference backend the generator returns a frame's 16 codes from one call, so
// first_code0 and first_frame are stamped together. On CUDA the prompt enters the model in the
// job's first launch: prefill_done marks the prompt's upload, first_frame includes its rows.
// first_code0/first_frame and first_pcm are the ends of the step's generate() and of its audio:
// the GPU's times where the backend measures them (engine_backend.h), else the host's after
// generate() and finish_vocode(). A job with request().trace gets the step (step_trace.h:
// batch, rows, prefills, the two calls' host and device spans) on each of its first
// k_traced_steps codec frames.
//
// Contract: create() starts the thread, the destructor stops it between steps and joins
// (dropping active jobs). submit(), wake(), failure() from any thread, never blocking beyond
// one mutex. Sessions call wake() whenever something a job waits on changed (text arrived, the
// output queue drained, a stall cleared, a cancel). The model and the metrics must outlive the
// engine; the backend is the engine's.
// busy_for() from any thread: how long the engine has been in its current unit of work (an
// admission with its prefill, or one step) without finishing it; zero while it waits for
// work. The daemon's watchdog reads it, so a hung step stops the process being reported alive.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/engine/batch_scheduler.h"
#include "pipeline/engine/engine_backend.h"
#include "pipeline/engine/engine_job.h"
#include "pipeline/engine/engine_slot.h"
#include "pipeline/engine/vocode_forecast.h"
#include "pipeline/graph/data_frames.h"
#include "pipeline/synthesis/reference_model.h"
#include "pipeline/telemetry/pipeline_metrics.h"
#include "pipeline/telemetry/step_trace.h"

namespace megatts {

struct engine_settings {
    // Paced jobs generate at most this much audio ahead of real-time playback (0: no limit).
    std::chrono::milliseconds lead_limit{2000};
    // In a step where a job takes its first frame, paced jobs at least this far ahead of
    // playback sit out (0: nobody does).
    std::chrono::milliseconds first_audio_yield{500};
    // Paced jobs at least this far ahead of playback (under lead_limit) do not call for a step:
    // they join the next one that runs (0: every job calls for one).
    std::chrono::milliseconds join_lead{1000};
    // Jobs a step takes at most, below the backend's own limit (0: the backend's): smaller steps
    // give new jobs their first audio sooner under load, larger ones more frames a second.
    int max_batch = 0;
    // While a step's audio is computed, the next step is chosen this long before the audio is due
    // (forecast from the last audio's device time), so that jobs submitted meanwhile join it. It
    // covers the choice and the launch (about 0.5 ms at 95 sessions on an H200) and the
    // forecast's noise: the GPU waits for the host only past it (300 us slowed a loaded step
    // 0.8%, 2 ms cost first audio 1 ms at p95: bench/RESULTS.md). 0: chosen as the audio starts.
    std::chrono::microseconds choice_margin{1000};
};

// What sessions are told when the engine failed for `reason`.
std::string engine_failure_message(const std::string& reason);

class engine {
public:
    using clock = std::chrono::steady_clock;

    struct hooks {
        // The clock playback is estimated with (tests drive it by hand); steady_clock if empty.
        std::function<clock::time_point()> playback_clock;
        // Called once, on the engine thread, when the engine fails; the argument names why.
        std::function<void(const std::string&)> on_failure;
    };

    // Fails when the tokenizer cannot encode the template's tail (a broken checkpoint).
    static result<std::unique_ptr<engine>> create(const reference_model& model, std::unique_ptr<engine_backend> backend,
                                                  const engine_settings& settings, const pipeline_metrics& metrics,
                                                  hooks h = {});
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    enum class admission { accepted, full, failed };
    [[nodiscard]] admission submit(std::shared_ptr<engine_job> job);
    void wake();
    std::chrono::steady_clock::duration busy_for() const;

    // The error that failed the engine; nullopt while it runs.
    std::optional<std::string> failure() const;
    int slots() const { return limits_.slots; }

private:
    engine(const reference_model& model, std::unique_ptr<engine_backend> backend, const engine_settings& settings,
           const pipeline_metrics& metrics, hooks h, std::vector<std::int32_t> tail_ids);

    void run();
    // Opens a backend slot for the job; an error means the backend failed.
    result<void> admit(const std::shared_ptr<engine_job>& job);
    // One step; whether it did anything. `wake_at` gets the time a lead-limited job may go
    // again. An error means the backend failed.
    result<bool> step(std::optional<clock::time_point>& wake_at);
    // Runs one batch through the backend, in order.
    struct runner {
        engine_slot* slot;
        std::shared_ptr<engine_client> client;
        std::int32_t text_id;
    };
    result<void> run_batch(std::span<const runner> batch);
    // Frees the job's backend slot and reservation; the job's last frame, if any, follows. The
    // slot object lives on (left_) until the end of the step.
    void leave(engine_slot& slot);
    void finish(engine_slot& slot, engine_client& client, stop_reason stop);
    // Collects the audio in flight (vocoding_), if any, and delivers the step's frames to its
    // sessions, waking them. `next_step`: when the step that follows it at once began (its
    // generate() call), if one does. An error means the backend failed.
    result<void> deliver_audio(std::optional<clock::time_point> next_step);
    // When the next step is to be chosen: choice_margin before the audio in flight is due; none
    // when no audio is in flight or nothing forecasts it (at once).
    std::optional<clock::time_point> choice_time() const;
    // Stamps the start of a unit of work for busy_for(); idle() clears it before a wait.
    void busy_from_now();
    void idle();
    // Ends every job of a failed backend step with `error`, or fails the engine.
    result<void> backend_error(std::span<const runner> batch, const error& e);
    // Moves the engine to FAILED and tells every job it holds, and `unadmitted`.
    void fail(const std::string& reason, std::span<const std::shared_ptr<engine_job>> unadmitted);
    // The job no longer counts against the slots.
    void release_reservation(const engine_job& job);
    // Leaves the backend slots of the jobs nobody wants any more (their reservations counted on it).
    void drop_unwanted();

    const reference_model& model_;
    const std::unique_ptr<engine_backend> backend_;
    const backend_limits limits_;
    const batch_policy policy_;
    const pipeline_metrics& metrics_;
    const hooks hooks_;
    const std::chrono::microseconds choice_margin_;
    const std::vector<std::int32_t> tail_ids_;
    const int sample_rate_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    // Jobs submitted, not yet taken by the engine thread; unwanted ones are pruned by submit().
    // Bounded: all were wanted at the last submit(), so at most slots.
    std::vector<std::shared_ptr<engine_job>> submitted_;
    // Jobs the engine thread took from submitted_ and has not let go: at most slots on backend
    // slots and slots being admitted.
    std::vector<std::shared_ptr<engine_job>> taken_;
    std::uint64_t wakes_ = 0;   // bumped by submit() and wake(), so no wake-up is lost
    std::optional<std::string> failure_;
    bool stopping_ = false;
    // steady_clock ticks when the current unit of work began; 0 while waiting.
    std::atomic<std::chrono::steady_clock::rep> busy_since_{0};

    // Engine thread only.
    std::vector<std::unique_ptr<engine_slot>> active_;  // in admission order
    std::vector<int> free_slots_;
    std::vector<std::unique_ptr<engine_slot>> left_;  // left in this step, freed at its end
    // The last step's frames whose audio the backend computes while the engine goes on
    // (start_vocode() ran, finish_vocode() has not): at most one step's. Their slots outlive it:
    // one that leaves before the delivery stays in left_ until the end of the step that delivers
    // (the next one, or the engine's stop).
    struct voiced {
        engine_slot* slot;
        std::shared_ptr<engine_client> client;
        codec_frame codes;
        std::int64_t first_sample;  // of its pcm_block
    };
    struct vocoding {
        step_trace trace;              // its generate() call's; the audio's added on delivery
        clock::time_point began;       // generate() called
        clock::time_point coded;       // generate() returned: the codec frames' time
        long batch = 1;                // jobs of the step, EOS ones included
        clock::time_point started{};   // start_vocode() called
        std::vector<voiced> frames;
    };
    std::optional<vocoding> vocoding_;
    vocode_forecast forecast_;  // of the audio calls' device times
    std::uint64_t steps_ = 0;  // batches run, for step_trace
    std::thread thread_;  // last: starts once everything above exists
};

}  // namespace megatts

// engine: the one thread that owns the model and runs every session's utterances (DESIGN.md §1:
// all model work goes through one engine thread, which batches across sessions).
//
// Loop: each round it admits the jobs submitted since the last round (building the prompt and
// running the prefill; marks admitted and prefill_done), then advances every active job that
// can go by one frame, in admission order (round-robin: no session waits more than one round
// for its next frame, and none gets two while another that can go gets none). A frame is talker + code predictor, then the
// vocoder (a per-job vocoder_stream), delivered to the job's client as codec_frame and
// pcm_block (marks first_code0, first_frame, first_pcm on the first). A job does not go when:
//   - its client cancelled it or is gone: dropped at once (its in-flight output is discarded
//     by the session, which moved to a new epoch);
//   - its client is not ready_for_frame(): output queue full, or stalled by a slow transport
//     (backpressure: a slow consumer costs the engine nothing);
//   - it streams text and the next text token has not arrived (engine_slot.h).
// A job ends with end_of_audio (stop reason, frames, compute time) or an error_report. When no
// job can go the thread sleeps until submit() or wake().
// On the reference backend the generator returns a frame's 16 codes from one call, so
// first_code0 and first_frame are stamped together; the GPU backend will stamp codebook 0 apart.
//
// Contract: the constructor starts the thread, the destructor stops it between frames and joins
// (dropping active jobs). submit() and wake() from any thread, never blocking beyond one mutex.
// submit() refuses a job (false) when max_jobs jobs that their sessions still want are already
// submitted or active; the service admits at most that many sessions, each with one wanted job
// at a time, so a refusal is a bug. A job stops counting the moment it stops being wanted
// (cancelled, its session gone) or the engine lets it go, which it does before telling its
// client the job ended: a session may submit its next job at once, before the engine's round
// has dropped the old one from the active set.
// Sessions call wake() whenever something a job waits on changed (text arrived, the output
// queue drained, a stall cleared, a cancel). The model must outlive the engine.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/common/result.h"
#include "pipeline/engine/engine_job.h"
#include "pipeline/engine/engine_slot.h"
#include "pipeline/synthesis/reference_model.h"
#include "pipeline/telemetry/pipeline_metrics.h"

namespace megatts {

class engine {
public:
    // Fails when the tokenizer cannot encode the template's tail (a broken checkpoint).
    static result<std::unique_ptr<engine>> create(const reference_model& model, int max_jobs,
                                                  const pipeline_metrics& metrics);
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    [[nodiscard]] bool submit(std::shared_ptr<engine_job> job);
    void wake();

private:
    engine(const reference_model& model, int max_jobs, const pipeline_metrics& metrics,
           std::vector<std::int32_t> tail_ids);

    void run();
    void admit(std::shared_ptr<engine_job> job);
    // Advances the slots that can go by one frame each; whether any did anything.
    bool round();
    enum class turn_outcome { idle, advanced, finished };  // finished: leaves the active set
    // One slot's turn: at most one frame.
    turn_outcome turn(engine_slot& slot, engine_client& client);
    void finish(engine_slot& slot, engine_client& client, stop_reason stop);
    // The engine is done with `job`: it no longer counts against max_jobs_.
    void release(const engine_job& job);

    const reference_model& model_;
    const int max_jobs_;
    const pipeline_metrics& metrics_;
    const std::vector<std::int32_t> tail_ids_;
    const int sample_rate_;

    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<std::shared_ptr<engine_job>> submitted_;  // bounded: max_jobs_ wanted, with taken_
    std::vector<std::shared_ptr<engine_job>> taken_;      // taken from submitted_, not yet released
    std::uint64_t wakes_ = 0;  // bumped by submit() and wake(), so no wake-up is lost
    bool stopping_ = false;

    std::vector<std::unique_ptr<engine_slot>> active_;  // engine thread only
    std::thread thread_;  // last: starts once everything above exists
};

}  // namespace megatts

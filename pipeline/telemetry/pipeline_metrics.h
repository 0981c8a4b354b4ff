// pipeline_metrics: the metrics the pipeline keeps (DESIGN.md §1, issue 3's /metrics list),
// registered on the process's metrics_registry under fixed names:
//   megatts_ttfa_seconds                      histogram  server TTFA, first_sent - received
//   megatts_stage_seconds{stage}              histogram  each TTFA mark minus the one before it
//   megatts_real_time_factor                  histogram  engine compute / audio, per utterance
//   megatts_engine_frame_seconds              histogram  one engine step: a frame for each job of its batch, from
//                                                        its generate() to the next step's (steps tile the busy time)
//   megatts_engine_batch_size                 histogram  jobs in one engine step
//   megatts_engine_generate_seconds           histogram  a step's generate(): talker, prompts, code predictor
//   megatts_engine_vocode_seconds             histogram  a step's audio: start_vocode() to finish_vocode()
//   megatts_engine_gpu_seconds{call}          histogram  the GPU's part of generate() and of the audio, where measured
//   megatts_engine_talker_rows                histogram  talker rows of one step (a first frame adds its prompt's)
//   megatts_engine_left_out_utterances        histogram  utterances ready for a frame that one step left out
//   megatts_engine_host_seconds{part}         histogram  the engine thread's work beside its GPU calls: admit,
//                                                        schedule (during a step's audio), deliver (the next step's)
//   megatts_client_first_played_seconds       histogram  TTFA as the client's player reported it
//   megatts_sessions                          gauge      open sessions
//   megatts_engine_active_utterances          gauge      utterances in the engine's active set
//   megatts_engine_failed                     gauge      1 once the engine's backend failed
//   megatts_queue_depth{queue}                gauge      frames queued: session_input, session_output
//   megatts_send_queue_seconds                gauge      audio handed to transports, not yet written
//   megatts_stalled_sessions                  gauge      sessions held back by their send queue (backpressure)
//   megatts_client_underruns_total            counter    underruns clients reported
//   megatts_audio_seconds_total               counter    audio produced
//   megatts_utterances_total{stop}            counter    finished utterances by stop reason, and cancelled
//   megatts_errors_total{code}                counter    session errors by session_errc name
//
// Contract: create() registers everything once; the pointers stay valid as long as the
// registry. All updates are lock-free and safe from any thread.
#pragma once

#include <array>

#include "kernels/common/result.h"
#include "pipeline/session/session_error.h"
#include "pipeline/synthesis/utterance.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "pipeline/telemetry/ttfa_mark.h"

namespace megatts {

struct pipeline_metrics {
    histogram* ttfa = nullptr;
    std::array<histogram*, k_ttfa_mark_count> stage{};  // by mark; none for `received`
    histogram* real_time_factor = nullptr;
    histogram* engine_frame = nullptr;
    histogram* engine_batch = nullptr;
    histogram* engine_generate = nullptr;
    histogram* engine_vocode = nullptr;
    histogram* engine_generate_gpu = nullptr;  // megatts_engine_gpu_seconds{call="generate"}
    histogram* engine_vocode_gpu = nullptr;    // megatts_engine_gpu_seconds{call="vocode"}
    histogram* engine_rows = nullptr;
    histogram* engine_left_out = nullptr;
    histogram* engine_host_admit = nullptr;     // megatts_engine_host_seconds{part="admit"}
    histogram* engine_host_schedule = nullptr;  // {part="schedule"}
    histogram* engine_host_deliver = nullptr;   // {part="deliver"}
    histogram* client_first_played = nullptr;
    gauge* sessions = nullptr;
    gauge* engine_active = nullptr;
    gauge* engine_failed = nullptr;
    gauge* session_input_depth = nullptr;
    gauge* session_output_depth = nullptr;
    gauge* send_queue_seconds = nullptr;
    gauge* stalled_sessions = nullptr;
    counter* client_underruns = nullptr;
    counter* audio_seconds = nullptr;
    std::array<counter*, 3> utterances_by_stop{};  // by stop_reason
    counter* utterances_cancelled = nullptr;
    std::array<counter*, k_session_errc_count> errors{};  // by session_errc

    static result<pipeline_metrics> create(metrics_registry& registry);

    void count_error(session_errc code) const { errors[static_cast<std::size_t>(code)]->add(); }
    void count_stop(stop_reason stop) const { utterances_by_stop[static_cast<std::size_t>(stop)]->add(); }
};

}  // namespace megatts

#include "pipeline/telemetry/pipeline_metrics.h"

#include <string>

namespace megatts {
namespace {

// Seconds. TTFA spans a few ms (GPU) to seconds (CPU reference at full size).
constexpr double k_latency_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15,
                                       0.2,   0.3,    0.5,   0.75, 1.0,   2.0,  5.0,   10.0};
// Real-time factor: below 1 is faster than real time.
// Jobs per engine step: the megakernel takes up to 128.
constexpr double k_batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128};
// Talker rows per engine step: up to 64 a row chunk of the megakernel, which takes 128.
constexpr double k_row_bounds[] = {1, 8, 16, 32, 48, 64, 96, 128, 256};
// Seconds of the engine thread's own work between GPU calls: microseconds to a few ms.
constexpr double k_host_bounds[] = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.1};
constexpr double k_rtf_bounds[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 5.0, 10.0, 50.0};

template <class T>
result<void> take(result<T*> r, T*& out) {
    if (!r) return r.err();
    out = *r;
    return {};
}

}  // namespace

result<pipeline_metrics> pipeline_metrics::create(metrics_registry& reg) {
    pipeline_metrics m;
    MEGATTS_TRY(take(reg.add_histogram("megatts_ttfa_seconds", "Server time to first audio: first_sent - received.",
                                       k_latency_bounds),
                     m.ttfa));
    for (auto mark : k_ttfa_marks) {
        if (mark == ttfa_mark::received) continue;
        MEGATTS_TRY(take(reg.add_histogram("megatts_stage_seconds",
                                           "Time from the previous TTFA mark to this one, per utterance.",
                                           k_latency_bounds, {{"stage", std::string(ttfa_mark_name(mark))}}),
                         m.stage[static_cast<std::size_t>(mark)]));
    }
    MEGATTS_TRY(take(reg.add_histogram("megatts_real_time_factor",
                                       "Engine compute time over audio duration, per utterance.", k_rtf_bounds),
                     m.real_time_factor));
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_frame_seconds",
                                       "Time of one engine step: talker, code predictor and vocoder of one frame "
                                       "for every job of its batch, from its generate() to the next step's (or to "
                                       "its audio's delivery when none follows at once).",
                                       k_latency_bounds),
                     m.engine_frame));
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_batch_size", "Jobs in one engine step.", k_batch_bounds),
                     m.engine_batch));
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_generate_seconds",
                                       "Time of one engine step's generate(): the talker (with the prompts of first "
                                       "frames), the code predictor and sampling for every job of its batch.",
                                       k_latency_bounds),
                     m.engine_generate));
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_vocode_seconds",
                                       "Time of one engine step's audio, from start_vocode() to finish_vocode(): "
                                       "one frame of audio for every job whose frame was not EOS (the next step's "
                                       "choice and generate() overlap it).",
                                       k_latency_bounds),
                     m.engine_vocode));
    // Beside the host's times above: what a call spent outside the GPU (launch preparation,
    // uploads, waiting) is the difference.
    for (auto [call, out] : {std::pair{"generate", &m.engine_generate_gpu}, std::pair{"vocode", &m.engine_vocode_gpu}}) {
        MEGATTS_TRY(take(reg.add_histogram("megatts_engine_gpu_seconds",
                                           "GPU time of one engine step's generate() or audio, from CUDA events, "
                                           "where the backend measures it.",
                                           k_latency_bounds, {{"call", call}}),
                         *out));
    }
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_talker_rows",
                                       "Talker rows of one engine step: one a job, a first frame's prompt rows "
                                       "where the backend runs prompts in the step.",
                                       k_row_bounds),
                     m.engine_rows));
    MEGATTS_TRY(take(reg.add_histogram("megatts_engine_left_out_utterances",
                                       "Utterances ready for a frame that one engine step left out: its batch or "
                                       "talker rows were full, or they yielded to a first frame.",
                                       k_batch_bounds),
                     m.engine_left_out));
    // The GPU idles while the engine thread does these (a step's calls run one after the other):
    // admitting arrived jobs (their prompts' uploads), choosing the next batch, handing a step's
    // codes and PCM to the sessions.
    for (auto [part, out] : {std::pair{"admit", &m.engine_host_admit}, std::pair{"schedule", &m.engine_host_schedule},
                             std::pair{"deliver", &m.engine_host_deliver}}) {
        MEGATTS_TRY(take(reg.add_histogram("megatts_engine_host_seconds",
                                           "The engine thread's work beside its GPU calls, per loop: admitting arrived "
                                           "jobs, choosing a step's batch, delivering a step's codes and audio.",
                                           k_host_bounds, {{"part", part}}),
                         *out));
    }
    MEGATTS_TRY(take(reg.add_histogram("megatts_client_first_played_seconds",
                                       "Time to first played audio as clients reported it.", k_latency_bounds),
                     m.client_first_played));
    MEGATTS_TRY(take(reg.add_gauge("megatts_sessions", "Open sessions."), m.sessions));
    MEGATTS_TRY(take(reg.add_gauge("megatts_engine_active_utterances", "Utterances in the engine's active set."),
                     m.engine_active));
    MEGATTS_TRY(take(reg.add_gauge("megatts_engine_failed", "1 once the engine's backend failed (the server restarts)."),
                     m.engine_failed));
    MEGATTS_TRY(take(reg.add_gauge("megatts_queue_depth", "Frames waiting in session queues.",
                                   {{"queue", "session_input"}}),
                     m.session_input_depth));
    MEGATTS_TRY(take(reg.add_gauge("megatts_queue_depth", "Frames waiting in session queues.",
                                   {{"queue", "session_output"}}),
                     m.session_output_depth));
    MEGATTS_TRY(take(reg.add_gauge("megatts_send_queue_seconds", "Audio handed to transports and not yet written."),
                     m.send_queue_seconds));
    MEGATTS_TRY(take(reg.add_gauge("megatts_stalled_sessions",
                                   "Sessions whose unwritten audio passed send_queue.soft_ms: no frames for them until "
                                   "it falls to half of that."),
                     m.stalled_sessions));
    MEGATTS_TRY(take(reg.add_counter("megatts_client_underruns_total", "Playback underruns reported by clients."),
                     m.client_underruns));
    MEGATTS_TRY(take(reg.add_counter("megatts_audio_seconds_total", "Seconds of audio synthesised."),
                     m.audio_seconds));
    for (auto stop : {stop_reason::eos, stop_reason::max_frames, stop_reason::runaway_guard}) {
        MEGATTS_TRY(take(reg.add_counter("megatts_utterances_total", "Finished utterances by how they stopped.",
                                         {{"stop", stop_reason_name(stop)}}),
                         m.utterances_by_stop[static_cast<std::size_t>(stop)]));
    }
    MEGATTS_TRY(take(reg.add_counter("megatts_utterances_total", "Finished utterances by how they stopped.",
                                     {{"stop", "cancelled"}}),
                     m.utterances_cancelled));
    for (auto code : k_session_errcs) {
        MEGATTS_TRY(take(reg.add_counter("megatts_errors_total", "Session errors by code.",
                                         {{"code", std::string(session_errc_name(code))}}),
                         m.errors[static_cast<std::size_t>(code)]));
    }
    return m;
}

}  // namespace megatts

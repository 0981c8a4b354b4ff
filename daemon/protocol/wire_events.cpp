#include "daemon/protocol/wire_events.h"

#include "pipeline/audio/sample_rates.h"

namespace megatts {

started_event to_started_event(const utterance_started& started) {
    started_event e{.context = started.context, .format = started.format, .sample_rate = started.sample_rate};
    if (started.format == audio_format::opus) {
        e.sample_rate = opus_granule_rate;
        e.opus_frame_ms = started.opus_frame_ms;
        e.pre_skip = started.opus_pre_skip;
    }
    return e;
}

metrics_event to_metrics_event(const utterance_metrics& metrics) {
    metrics_event e{.context = metrics.context};
    for (const auto mark : k_ttfa_marks)
        if (auto ms = metrics.marks.ms_after_received(mark)) e.marks.emplace_back(ttfa_mark_name(mark), *ms);
    e.server_ttfa_ms = metrics.marks.ms_after_received(ttfa_mark::first_sent);
    return e;
}

done_event to_done_event(const utterance_done& done, std::int64_t messages) {
    done_event e{.context = done.context,
                 .reason = done.stop == stop_reason::eos ? done_reason::end : done_reason::max_frames,
                 .layout = done.layout == text_layout::non_streaming ? utterance_layout::whole
                                                                     : utterance_layout::streaming,
                 .frames = done.frames,
                 .audio_ms = done.audio_ms,
                 .messages = messages};
    if (done.audio_ms > 0) e.rtf = done.real_time_factor;
    return e;
}

std::uint32_t wire_timestamp(audio_format format, int sample_rate, std::int64_t sample) {
    const std::int64_t clock_sample = format == audio_format::opus ? sample * opus_granule_rate / sample_rate : sample;
    return static_cast<std::uint32_t>(clock_sample);
}

}  // namespace megatts

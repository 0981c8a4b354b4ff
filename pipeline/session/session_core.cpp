#include "pipeline/session/session_core.h"

#include <utility>

#include "pipeline/audio/sample_rates.h"
#include "pipeline/session/session_hub.h"
#include "pipeline/stages/chat_template.h"
#include "pipeline/stages/output_stages.h"
#include "pipeline/stages/tokenize_stage.h"

namespace megatts {
namespace {

// Input: cancel requests coalesce (cancel_queued_), so one system slot would do; two leave room
// for a cancel arriving while the previous one is being served.
constexpr std::size_t k_input_system_frames = 2;
// Output: at most 6 system frames per engine job (5 marks, 1 error); the strand drains the lane
// before it submits another job, so only cancels interleaved with restarts inside one strand
// turn could stack jobs' frames; 64 covers ten of them.
constexpr std::size_t k_output_system_frames = 64;
// Output ordered lane: two engine steps' frames and the audio of one in flight. The engine asks
// for room for a step's frames (and the in-flight audio's) before each step, so that frames
// not yet taken do not hold the job back until a step's worth of them piles up, and the queue
// holds at most 320 ms of PCM.
constexpr std::size_t k_output_ordered_frames = 2 * k_frames_per_step + k_frames_in_flight;

// Template ids before the first text token: the streaming layout starts with one more.
constexpr std::size_t k_streaming_min_ids = k_template_role_ids + 1;
constexpr std::size_t k_template_ids = k_template_role_ids + k_template_tail_ids;

std::int64_t duration_us(std::int64_t samples, int rate) { return samples * 1'000'000 / rate; }

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

session_core::session_core(std::uint64_t id, session_hub& hub, std::shared_ptr<strand> on,
                           std::shared_ptr<session_events> events)
    : id_(id),
      hub_(hub),
      strand_(std::move(on)),
      gate_(hub.model().config(), hub.limits()),
      input_({k_input_system_frames, static_cast<std::size_t>(hub.limits().input_queue_frames)},
             hub.metrics().session_input_depth),
      output_({k_output_system_frames, k_output_ordered_frames}, hub.metrics().session_output_depth),
      events_(std::move(events)),
      ledger_(static_cast<std::int64_t>(hub.limits().soft_queue_ms) * 1000, *hub.metrics().send_queue_seconds,
              *hub.metrics().stalled_sessions) {}

// ---- calls (any thread) ----

session_status session_core::start(const utterance_options& options) {
    std::lock_guard lock(mutex_);
    return enqueue(gate_.plan_start(options));
}

session_status session_core::text(std::string_view chunk, text_end after) {
    std::lock_guard lock(mutex_);
    return enqueue(gate_.plan_text(chunk, after));
}

session_status session_core::close_text(text_end how) {
    std::lock_guard lock(mutex_);
    return enqueue(gate_.plan_close(how));
}

session_status session_core::enqueue(session_result<input_gate::plan> plan) {
    if (plan && !input_.has_room(plan->frames.size()))
        plan = session_error{session_errc::queue_full, "too many calls are waiting; slow down"};
    if (!plan) {
        hub_.metrics().count_error(plan.err().code);
        return plan.err();
    }
    const auto now = clock::now();
    const auto epoch = epoch_.load();
    for (auto& [context, payload] : plan->frames) {
        // Room was checked under the same mutex that every producer of this queue holds.
        (void)input_.push(frame{{id_, epoch, context, now}, std::move(payload)});
    }
    gate_.commit(std::move(plan.value()));
    schedule();
    return {};
}

void session_core::cancel() {
    {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        const auto epoch = epoch_.load() + 1;
        epoch_.store(epoch);
        gate_.cancel();
        // Coalesced, so the system lane never fills (k_input_system_frames).
        if (!cancel_queued_.exchange(true))
            (void)input_.push(frame{{id_, epoch, 0, clock::now()}, cancel_request{}});
    }
    schedule();
    hub_.model_engine().wake();
}

void session_core::audio_sent(const audio_receipt& receipt, bool written) {
    // Bounded: one post per chunk handed over, and chunks stop while the session is stalled.
    post([self = shared_from_this(), receipt, written, at = clock::now()] {
        self->on_sent(receipt, written, at);
    });
}

void session_core::client_report(const client_playback_report& report) {
    if (report.underruns > 0) hub_.metrics().client_underruns->add(report.underruns);
    if (report.first_played_ms >= 0) hub_.metrics().client_first_played->observe(report.first_played_ms / 1000.0);
}

void session_core::close() {
    {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        closed_.store(true);
        epoch_.store(epoch_.load() + 1);
        gate_.cancel();
        gate_.close();
    }
    hub_.release();
    hub_.model_engine().wake();
    // The strand leaves the session here: the engine may still hold the session after this
    // and let it go last, on its own thread, after the strand's executor is gone (the daemon
    // stops its io_context before the service); and nothing posts to the strand any more.
    std::shared_ptr<strand> on;
    {
        std::lock_guard lock(strand_mutex_);
        on.swap(strand_);
    }
    on->post([self = shared_from_this()] {
        self->utterances_.clear();
        self->events_.reset();
    });
}

void session_core::engine_failed(const std::string& message) {
    post([self = shared_from_this(), message] {
        if (self->closed_ || !self->events_) return;
        self->hub_.metrics().count_error(session_errc::engine_failed);
        self->events_->on_error(0, {session_errc::engine_failed, message});
    });
}

// ---- engine thread ----

bool session_core::current(std::uint32_t epoch) const { return !closed_.load() && epoch == epoch_.load(); }

bool session_core::ready_for_frames(std::size_t frames) const { return !ledger_.stalled() && output_.has_room(frames); }

void session_core::deliver(frame f) {
    queue(std::move(f));
    wake();
}

void session_core::queue(frame f) {
    if (!output_.push(std::move(f))) hub_.metrics().count_error(session_errc::internal);
}

void session_core::wake() { schedule(); }

void session_core::schedule() {
    if (!drain_pending_.exchange(true)) post([self = shared_from_this()] { self->drain(); });
}

void session_core::post(strand_task task) {
    std::lock_guard lock(strand_mutex_);
    if (strand_) strand_->post(std::move(task));
}

// ---- strand ----

void session_core::drain() {
    drain_pending_.store(false);
    bool took_output = false;
    const auto pieces_before = pieces_fed_;
    for (;;) {
        const auto epoch = epoch_.load();
        if (auto f = input_.pop(epoch)) {
            on_input(std::move(*f));
        } else if (remainder_) {
            // An utterance's second packet waits for its first one's receipt (on_sent resumes):
            // the transport's completion of that write would otherwise queue behind the second
            // packet's encoding on this thread, and first_sent with it (0.25-0.36 ms late, so
            // that the server's TTFA came out longer than the client's). The client needs the
            // second packet a packet's duration after the first.
            if (awaiting_first_receipt()) break;
            // One packet's PCM per strand turn: the transport's completion of the packet just
            // sent and other sessions' work on this thread go before the next encode, instead
            // of waiting for a whole vocoder frame's packets.
            if (pieces_fed_ != pieces_before) {
                schedule();
                break;
            }
            feed_piece();
        } else if (auto g = output_.pop(epoch)) {
            took_output = true;
            on_output(std::move(*g));
        } else {
            break;
        }
        reap();
    }
    // Only now, with every queued call served, so that a text closed by the same call (or the
    // same strand handler) that brought it is known closed: the non-streaming layout.
    submit_next();
    // Room in the output queue is what a waiting engine job may need.
    if (took_output) hub_.model_engine().wake();
}

void session_core::on_input(frame f) {
    if (closed_) return;
    if (std::holds_alternative<cancel_request>(f.payload)) {
        cancel_queued_.store(false);
        discard_stale();
        return;
    }
    if (auto* start = std::get_if<utterance_start>(&f.payload)) {
        begin(f.header, start->options);
        return;
    }
    auto* u = find(f.header.epoch, f.header.context);
    if (!u || u->finished) return;
    if (std::holds_alternative<text_chunk>(f.payload)) u->marks.record(ttfa_mark::received, f.header.created);
    u->input->push(std::move(f));
}

void session_core::begin(const frame_header& header, const utterance_options& options) {
    auto u = std::make_unique<session_utterance>();
    u->epoch = header.epoch;
    u->context = header.context;
    u->options = options;
    auto* raw = u.get();
    std::vector<std::unique_ptr<stage>> input;
    input.push_back(std::make_unique<tokenize_stage>(hub_.model().tokenizer));
    u->input = std::make_unique<stage_chain>(std::move(input), [this, raw](frame f) { on_tokens(*raw, std::move(f)); });
    auto output = make_output_stages(options, hub_.opus_encoders());
    utterances_.push_back(std::move(u));
    if (!output) {
        fail(*raw, {session_errc::internal, output.err().message});
        return;
    }
    raw->sample_rate = output->sample_rate;
    raw->piece_samples = output->piece_samples;
    raw->output = std::make_unique<stage_chain>(std::move(output->stages),
                                                [this, raw](frame f) { on_encoded(*raw, std::move(f)); });
    if (deliverable(*raw))
        events_->on_started({raw->context, options.format, output->sample_rate,
                             options.format == audio_format::opus ? options.opus_frame_ms : 0, output->opus_pre_skip});
}

void session_core::on_tokens(session_utterance& u, frame f) {
    if (auto* e = std::get_if<error_report>(&f.payload)) {
        fail(u, e->error);
        return;
    }
    auto* tokens = std::get_if<text_tokens>(&f.payload);
    if (!tokens) return;  // end_of_text: the last tokens already said so
    if (u.job) {
        u.job->add_ids(tokens->ids, tokens->last);
        hub_.model_engine().wake();
        return;
    }
    u.ids.insert(u.ids.end(), tokens->ids.begin(), tokens->ids.end());
    u.text_closed = tokens->last;
    if (u.text_closed && u.ids.size() == k_template_ids)
        fail(u, {session_errc::empty_text, "the utterance's text has no tokens"});
}

void session_core::submit_next() {
    for (auto& held : utterances_) {
        auto& u = *held;
        if (u.finished || u.engine_end) continue;
        if (u.job) return;  // in the engine: one utterance of a session at a time
        // Whole text known: the non-streaming layout. Otherwise start on the first text token.
        if (!u.text_closed && u.ids.size() < k_streaming_min_ids) return;
        const auto layout = u.text_closed ? text_layout::non_streaming : text_layout::streaming;
        const auto& o = u.options;
        u.job = std::make_shared<engine_job>(
            frame_header{id_, u.epoch, u.context, clock::now()},
            engine_request{o.voice, o.language, o.sampling, layout, o.max_frames, o.paced, o.trace}, weak_from_this());
        u.job->add_ids(u.ids, u.text_closed);
        u.ids.clear();
        u.marks.record(ttfa_mark::tokenized, clock::now());
        switch (hub_.model_engine().submit(u.job)) {
        case engine::admission::accepted: break;
        case engine::admission::full:
            fail(u, {session_errc::engine_full, "every synthesis slot (" + std::to_string(hub_.model_engine().slots()) +
                                                    ") is busy; try again shortly"});
            break;
        case engine::admission::failed:
            fail(u, {session_errc::engine_failed,
                     engine_failure_message(hub_.model_engine().failure().value_or("no reason given"))});
            break;
        }
        return;
    }
}

void session_core::on_output(frame f) {
    if (closed_) return;
    auto* u = find(f.header.epoch, f.header.context);
    if (!u || u->finished) return;
    if (auto* m = std::get_if<mark_report>(&f.payload)) {
        u->marks.record(m->mark, f.header.created);
        return;
    }
    if (auto* e = std::get_if<error_report>(&f.payload)) {
        fail(*u, e->error);
        return;
    }
    if (auto* c = std::get_if<codec_frame>(&f.payload)) {  // transports carry audio only
        if (c->step && u->steps.size() < static_cast<std::size_t>(k_traced_steps)) u->steps.push_back(*c->step);
        return;
    }
    if (std::holds_alternative<pcm_block>(f.payload) && u->piece_samples > 0) {
        remainder_ = pcm_remainder{f.header.epoch, f.header.context, std::move(f)};
        feed_piece();
        return;
    }
    u->output->push(std::move(f));
}

bool session_core::awaiting_first_receipt() {
    const auto* u = find(remainder_->epoch, remainder_->context);
    return u && !u->finished && !closed_ && u->next_sequence == 1 && u->chunks_out > 0;
}

void session_core::feed_piece() {
    auto* u = find(remainder_->epoch, remainder_->context);
    if (!u || u->finished || closed_) {
        remainder_.reset();
        return;
    }
    auto& block = std::get<pcm_block>(remainder_->rest.payload);
    const auto n = static_cast<std::ptrdiff_t>(std::min(block.samples.size(), static_cast<std::size_t>(u->piece_samples)));
    frame piece{remainder_->rest.header,
                pcm_block{{block.samples.begin(), block.samples.begin() + n}, block.sample_rate, block.first_sample}};
    block.samples.erase(block.samples.begin(), block.samples.begin() + n);
    block.first_sample += n;
    if (block.samples.empty()) remainder_.reset();
    ++pieces_fed_;
    u->output->push(std::move(piece));
}

void session_core::on_encoded(session_utterance& u, frame f) {
    if (std::holds_alternative<opus_packet_frame>(f.payload) || std::holds_alternative<pcm16_block>(f.payload)) {
        send(u, f);
    } else if (auto* end = std::get_if<end_of_audio>(&f.payload)) {
        u.engine_end = *end;
        hub_.metrics().count_stop(end->stop);
        try_complete(u);
    } else if (auto* e = std::get_if<error_report>(&f.payload)) {
        fail(u, e->error);
    }
}

void session_core::send(session_utterance& u, const frame& f) {
    if (!deliverable(u)) return;
    audio_chunk chunk;
    chunk.sample_rate = u.sample_rate;
    if (auto* p = std::get_if<opus_packet_frame>(&f.payload)) {
        chunk.format = audio_format::opus;
        chunk.first_sample = p->packet.first_sample;
        chunk.samples = p->packet.real_samples;
        chunk.bytes = p->packet.data;
        chunk.receipt.duration_us = duration_us(p->frame_samples, u.sample_rate);
    } else {
        const auto& b = std::get<pcm16_block>(f.payload);
        chunk.format = audio_format::pcm16;
        chunk.first_sample = b.first_sample;
        chunk.samples = static_cast<int>(b.bytes.size() / 2);
        chunk.bytes = b.bytes;
        chunk.receipt.duration_us = duration_us(chunk.samples, u.sample_rate);
    }
    chunk.receipt.epoch = u.epoch;
    chunk.receipt.context = u.context;
    chunk.receipt.sequence = u.next_sequence++;
    u.marks.record(ttfa_mark::first_packet, f.header.created);
    ++u.chunks_out;
    const bool stall_flipped = ledger_.handed(chunk.receipt.duration_us);
    events_->on_audio(chunk);
    if (stall_flipped) stall_changed();
}

void session_core::on_sent(const audio_receipt& receipt, bool written, clock::time_point at) {
    if (ledger_.returned(receipt.duration_us)) stall_changed();
    auto* u = find(receipt.epoch, receipt.context);
    if (!u || u->finished) return;
    --u->chunks_out;
    if (written && receipt.sequence == 0) {
        u->marks.record(ttfa_mark::first_sent, at);
        report_metrics(*u);
    }
    if (receipt.sequence == 0 && remainder_) schedule();  // the rest of its PCM waited (drain())
    try_complete(*u);
    reap();
}

void session_core::report_metrics(session_utterance& u) {
    if (!u.marks.complete()) return;
    const auto& m = hub_.metrics();
    m.ttfa->observe(*u.marks.ms_after_received(ttfa_mark::first_sent) / 1000.0);
    for (std::size_t i = 1; i < k_ttfa_mark_count; ++i) {
        const auto mark = k_ttfa_marks[i];
        m.stage[static_cast<std::size_t>(mark)]->observe(
            ms_between(*u.marks.at(k_ttfa_marks[i - 1]), *u.marks.at(mark)) / 1000.0);
    }
    if (deliverable(u)) events_->on_metrics({u.context, u.marks});
}

void session_core::stall_changed() {
    if (!ledger_.stalled()) hub_.model_engine().wake();
    if (!closed_ && events_)
        events_->on_stall({ledger_.stalled(), static_cast<double>(ledger_.queued_us()) / 1000.0});
}

void session_core::try_complete(session_utterance& u) {
    if (u.finished || !u.engine_end || u.chunks_out > 0) return;
    const auto& end = *u.engine_end;
    const double audio_ms = 1000.0 * static_cast<double>(end.samples) / vocoder_sample_rate;
    const double compute_ms = std::chrono::duration<double, std::milli>(end.compute).count();
    const double rtf = audio_ms > 0 ? compute_ms / audio_ms : 0.0;
    if (audio_ms > 0) hub_.metrics().real_time_factor->observe(rtf);
    if (deliverable(u))
        events_->on_done(
            {u.context, end.stop, end.layout, end.text_tokens, end.frames, audio_ms, compute_ms, rtf, std::move(u.steps)});
    finish(u);
}

void session_core::fail(session_utterance& u, const session_error& error) {
    if (u.finished) return;
    hub_.metrics().count_error(error.code);
    if (u.job) u.job->abandon();
    hub_.model_engine().wake();
    if (deliverable(u)) events_->on_error(u.context, error);
    finish(u);
}

void session_core::finish(session_utterance& u) {
    u.finished = true;
    std::lock_guard lock(mutex_);
    // A cancel since the utterance started has already cleared the gate's count.
    if (u.epoch == epoch_.load()) gate_.finished();
}

void session_core::discard_stale() {
    const auto epoch = epoch_.load();
    for (auto& u : utterances_) {
        if (u->epoch < epoch && !u->finished) {
            hub_.metrics().utterances_cancelled->add();
            u->finished = true;
        }
    }
}

void session_core::reap() {
    std::erase_if(utterances_, [](const auto& u) { return u->finished; });
}

session_utterance* session_core::find(std::uint32_t epoch, std::uint32_t context) {
    for (auto& u : utterances_) {
        if (u->epoch == epoch && u->context == context) return u.get();
    }
    return nullptr;
}

bool session_core::deliverable(const session_utterance& u) const {
    return events_ && !closed_.load() && u.epoch == epoch_.load();
}

}  // namespace megatts

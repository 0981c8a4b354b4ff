// session_core: the inside of a tts_session (tts_session.h has the contract of the calls): the
// input queue and the call protocol in front of it, the per-utterance stage chains on the
// session's strand, the engine client the engine thread delivers to, and the send ledger.
//
// Threads: the call methods run on the caller's thread under one mutex (input_gate + the push
// into the input queue; cancel() also bumps the atomic epoch there). The engine thread calls
// the engine_client methods (atomics, the output queue, and post(), whose posts to the strand
// stop once close() has returned). Everything else runs on the strand, in
// drain() turns: at most one drain is pending at a time, and a turn serves the input queue's
// system lane, its ordered lane, then the output queue, until both are empty. An Opus
// utterance's PCM block enters its output chain one packet's worth per turn (the turn ends after
// a piece, and the next is posted), so that a packet's write completion is served before the
// next packet is encoded rather than after the whole vocoder frame's packets.
// Graph per utterance: input chain [tokenize] -> engine job -> output queue -> output chain
// ([resample], opus | pcm16 encode) -> transport (session_events::on_audio).
// Lifetime: shared; the strand's pending drain and the engine's jobs hold it (the engine
// weakly; it may let go of it last, on its own thread). close() gives up the strand and
// detaches the events on it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/engine/engine_client.h"
#include "pipeline/graph/frame_queue.h"
#include "pipeline/graph/strand.h"
#include "pipeline/session/input_gate.h"
#include "pipeline/session/send_ledger.h"
#include "pipeline/session/session_events.h"
#include "pipeline/session/session_utterance.h"
#include "pipeline/session/tts_session.h"

namespace megatts {

class session_hub;

class session_core final : public engine_client, public std::enable_shared_from_this<session_core> {
public:
    session_core(std::uint64_t id, session_hub& hub, std::shared_ptr<strand> on,
                 std::shared_ptr<session_events> events);

    session_status start(const utterance_options& options);
    session_status text(std::string_view chunk, text_end after);
    session_status close_text(text_end how);
    void cancel();
    void audio_sent(const audio_receipt& receipt, bool written);
    void client_report(const client_playback_report& report);
    void close();
    // The engine failed: tells the client (on_error with context 0), unless closed. Any thread.
    void engine_failed(const std::string& message);
    std::uint64_t id() const { return id_; }

    bool current(std::uint32_t epoch) const override;
    bool ready_for_frames(std::size_t frames) const override;
    void deliver(frame f) override;
    void queue(frame f) override;
    void wake() override;

private:
    using clock = std::chrono::steady_clock;

    // Calls: queue a plan's frames, or count and return its error.
    session_status enqueue(session_result<input_gate::plan> plan);
    void schedule();
    // To the strand, unless the session is closed (then dropped). Any thread.
    void post(strand_task task);

    // Strand.
    void drain();
    void on_input(frame f);
    void on_output(frame f);
    // Feeds the next packet's worth of remainder_ into its utterance's output stages.
    void feed_piece();
    // Whether remainder_'s utterance has handed its first chunk over and its receipt is not back.
    bool awaiting_first_receipt();
    void on_tokens(session_utterance& u, frame f);
    void on_encoded(session_utterance& u, frame f);
    void on_sent(const audio_receipt& receipt, bool written, clock::time_point at);
    void begin(const frame_header& header, const utterance_options& options);
    void send(session_utterance& u, const frame& f);
    void submit_next();
    void fail(session_utterance& u, const session_error& error);
    void try_complete(session_utterance& u);
    void finish(session_utterance& u);
    void report_metrics(session_utterance& u);
    void stall_changed();
    void discard_stale();
    void reap();
    session_utterance* find(std::uint32_t epoch, std::uint32_t context);
    // Whether events of `u` may still reach the client (not cancelled, session not closed).
    bool deliverable(const session_utterance& u) const;

    const std::uint64_t id_;
    session_hub& hub_;
    // Until close(), which takes it (see there); posts go through post(), under the mutex, so
    // that none reaches the strand once close() has returned. Lock order: mutex_, then this.
    std::mutex strand_mutex_;
    std::shared_ptr<strand> strand_;

    std::mutex mutex_;
    input_gate gate_;                    // under mutex_
    std::atomic<std::uint32_t> epoch_{0};  // written under mutex_
    std::atomic<bool> closed_{false};      // written under mutex_
    std::atomic<bool> cancel_queued_{false};
    std::atomic<bool> drain_pending_{false};
    frame_queue input_;
    frame_queue output_;

    // Strand only.
    std::shared_ptr<session_events> events_;
    std::deque<std::unique_ptr<session_utterance>> utterances_;  // in start order
    // The part of an Opus utterance's PCM block not yet fed to its stages, a packet's worth per
    // strand turn (drain()); output frames behind it wait, so order holds.
    struct pcm_remainder {
        std::uint32_t epoch = 0;
        std::uint32_t context = 0;
        frame rest;
    };
    std::optional<pcm_remainder> remainder_;
    std::uint64_t pieces_fed_ = 0;
    send_ledger ledger_;
};

}  // namespace megatts

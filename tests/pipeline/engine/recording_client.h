// An engine_client that records what the engine delivers, as a session would, with switches
// for backpressure (ready_, and credits_: how many more codec frames it takes, -1 for any) and cancel
// (epoch_), and a log shared by several clients of the order in which their codec frames came.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "pipeline/engine/engine_client.h"
#include "pipeline/engine/engine_job.h"
#include "pipeline/telemetry/ttfa_marks.h"

namespace megatts::test {

// The sessions in the order the engine delivered their codec frames.
struct frame_log {
    std::mutex mutex;
    std::vector<std::uint64_t> sessions;
};

class recording_client final : public engine_client {
public:
    recording_client(std::uint64_t session, frame_log& log) : session_(session), log_(&log) {}

    bool current(std::uint32_t epoch) const override { return epoch == epoch_.load(); }
    // Room for a codec frame beyond the one whose audio is in flight, if one is (the engine asks
    // for more than one step's frames).
    bool ready_for_frames(std::size_t n) const override {
        const int in_flight = n > k_frames_per_step ? 1 : 0;
        const int credits = credits_.load();
        const bool ready = ready_->load() && (credits < 0 || credits > in_flight);
        if (!ready) ++refusals_;
        return ready;
    }
    void deliver(frame f) override {
        queue(std::move(f));
        wake();
    }
    // What the session's queue would hold is recorded at once; unwoken() counts the frames
    // queued since the last wake, which the engine must not leave behind when it waits.
    void wake() override {
        std::lock_guard lock(mutex_);
        unwoken_ = 0;
        changed_.notify_all();
    }
    int unwoken() {
        std::lock_guard lock(mutex_);
        return unwoken_;
    }
    void queue(frame f) override {
        std::lock_guard lock(mutex_);
        ++unwoken_;
        if (end && (std::holds_alternative<codec_frame>(f.payload) || std::holds_alternative<pcm_block>(f.payload)))
            data_after_end = true;
        if (auto* c = std::get_if<codec_frame>(&f.payload)) {
            codes.insert(codes.end(), c->codes.begin(), c->codes.begin() + c->groups);
            if (c->index != frames) frames_in_order = false;  // Catch is not thread-safe: checked later
            if (c->step) steps.push_back(c->step);
            ++frames;
            if (credits_.load() > 0) --credits_;
            std::lock_guard log_lock(log_->mutex);
            log_->sessions.push_back(session_);
        } else if (auto* p = std::get_if<pcm_block>(&f.payload)) {
            if (p->first_sample != static_cast<std::int64_t>(pcm.size())) blocks_tile = false;
            pcm.insert(pcm.end(), p->samples.begin(), p->samples.end());
        } else if (auto* e = std::get_if<end_of_audio>(&f.payload)) {
            end = *e;
        } else if (auto* m = std::get_if<mark_report>(&f.payload)) {
            marks.record(m->mark, f.header.created);
        } else if (auto* r = std::get_if<error_report>(&f.payload)) {
            error = r->error;
        }
        changed_.notify_all();
    }

    // Waits until `done` holds (under the lock) or a generous timeout.
    template <class Pred>
    bool wait(Pred done) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return done(*this); });
    }
    int frame_count() {
        std::lock_guard lock(mutex_);
        return frames;
    }
    bool finished() {
        std::lock_guard lock(mutex_);
        return end.has_value() || error.has_value();
    }

    std::atomic<std::uint32_t> epoch_{0};
    std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(true);
    std::atomic<int> credits_{-1};
    // How often ready_for_frames() said no. Once it has twice, the engine has delivered every
    // frame of the steps before the first no: it asks before each step, and delivers a step's
    // frames before it asks again for the step after the next.
    mutable std::atomic<int> refusals_{0};

    std::vector<std::int32_t> codes;
    std::vector<float> pcm;
    bool blocks_tile = true;       // every pcm_block starts where the previous one ended
    bool frames_in_order = true;   // codec frames numbered 0, 1, 2, ...
    bool data_after_end = false;   // a codec frame or PCM queued after the end_of_audio
    int frames = 0;
    std::optional<end_of_audio> end;
    std::optional<session_error> error;
    ttfa_marks marks;
    std::vector<std::shared_ptr<const step_trace>> steps;  // of the codec frames that carried one

private:
    std::uint64_t session_;
    frame_log* log_;
    int unwoken_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
};

}  // namespace megatts::test

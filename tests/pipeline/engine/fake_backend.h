// fake_backend: an engine_backend with no model: deterministic codes from the utterance's seed
// and frame number, constant-valued PCM, a record of every batch the engine ran, and a failure
// that can be injected at the Nth generate(). What the engine's scheduling tests drive.
//
// Codes of the frame f of an utterance with seed s: codebook g is (s * 100 + f * 16 + g) % 2048,
// so a test can tell whose frame it got and which; codebook 0 is EOS (2150) at f == eos_frame
// when eos_frame > 0. Its PCM is 1920 samples, each codes[0] / 2048. open() refuses an
// utterance with seed k_refused_seed (invalid_input, as the cuda backend refuses a top_k).
// The error at generate() number error_at is fatal (failed() true, as a CUDA error) or not.
// shared_state::allow(n) lets n more generate() calls run and holds the next one until the
// next allow() (-1: no hold), so that a test can act while a step is in flight.
// Device times (fake_faults::device): last_device_span() after generate() gives the host times
// of the call's body shifted by device_offset, as a GPU's events mapped onto the host clock
// (an offset that puts them outside the call stands for the mapping's error); none after
// finish_vocode(), unless fake_faults::vocode_time: then each audio call lasts that long from its
// start_vocode() (finish_vocode() waits for its end, as for a GPU's) and reports that span.
// shared_state::vocoding counts the audio started and not yet finished, vocode_calls the
// start_vocode() calls (wait_vocode_calls() waits for a count).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/engine/engine_backend.h"

namespace megatts::test {

struct fake_step {
    std::vector<generate_item> items;
};

struct fake_faults {
    int error_at = 0;  // generate() call that fails; 0: none
    bool fatal = true;
    int eos_frame = 0;
    bool device = false;  // report device times for generate()
    std::chrono::nanoseconds device_offset{0};
    std::chrono::nanoseconds vocode_time{0};  // > 0: each audio call's duration and device time
};

class fake_backend final : public engine_backend {
public:
    static constexpr int k_samples = 1920;
    static constexpr std::int32_t k_eos = 2150;

    struct shared_state {  // what the test reads while the engine runs
        void allow(int n) {
            {
                std::lock_guard lock(mutex);
                permits = n;
            }
            permit.notify_all();
        }

        // Waits until a generate() call is held by allow(); false after 20 s.
        bool wait_held() {
            std::unique_lock lock(mutex);
            return permit.wait_for(lock, std::chrono::seconds(20), [&] { return held; });
        }

        // Waits until start_vocode() has been called n times; false after 20 s.
        bool wait_vocode_calls(int n) {
            std::unique_lock lock(mutex);
            return permit.wait_for(lock, std::chrono::seconds(20), [&] { return vocode_calls >= n; });
        }

        std::mutex mutex;
        std::condition_variable permit;  // permits, held or vocode_calls changed
        int permits = -1;
        bool held = false;
        std::vector<fake_step> steps;
        std::vector<int> opened, released;  // slot indices, in order
        int vocoding = 0;  // start_vocode() calls not finished
        int vocode_calls = 0;
        std::map<int, std::uint64_t> seed_of_slot;
    };

    static constexpr std::uint64_t k_refused_seed = 666;

    fake_backend(backend_limits limits, std::shared_ptr<shared_state> state, fake_faults f = {})
        : limits_(limits), state_(std::move(state)), faults_(f) {}

    std::string_view name() const override { return "fake"; }
    backend_limits limits() const override { return limits_; }

    result<void> open(int slot, std::span<const prompt_row>, const ref::generation_options& options) override {
        if (options.seed == k_refused_seed) return make_error(error_kind::invalid_input, "fake: this seed is refused");
        std::lock_guard lock(state_->mutex);
        state_->opened.push_back(slot);
        state_->seed_of_slot[slot] = options.seed;
        return {};
    }

    result<void> generate(std::span<const generate_item> items, std::span<std::optional<ref::frame_codes>> out,
                          const std::function<void()>& meanwhile) override {
        device_.reset();
        if (meanwhile) meanwhile();
        std::unique_lock lock(state_->mutex);
        if (state_->permits == 0) {
            state_->held = true;
            state_->permit.notify_all();
            state_->permit.wait(lock, [&] { return state_->permits != 0; });
            state_->held = false;
        }
        if (state_->permits > 0) --state_->permits;
        state_->steps.push_back({{items.begin(), items.end()}});
        if (static_cast<int>(state_->steps.size()) == faults_.error_at) {
            failed_ = faults_.fatal;
            return make_error(error_kind::unavailable, "fake CUDA error: an illegal memory access was encountered");
        }
        const auto began = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < items.size(); ++i) {
            out[i] = codes_of(state_->seed_of_slot[items[i].slot], items[i].frame);
            if (faults_.eos_frame > 0 && items[i].frame == faults_.eos_frame) out[i].reset();
        }
        if (faults_.device)
            device_ = host_span{began + faults_.device_offset, std::chrono::steady_clock::now() + faults_.device_offset};
        return {};
    }

    result<void> start_vocode(std::span<const vocode_item> items) override {
        if (!pcm_.empty()) return make_error(error_kind::internal, "fake: start_vocode() before finish_vocode()");
        for (const auto& it : items) pcm_.emplace_back(k_samples, static_cast<float>(it.codes[0]) / 2048.0f);
        vocode_started_ = std::chrono::steady_clock::now();
        {
            std::lock_guard lock(state_->mutex);
            ++state_->vocoding;
            ++state_->vocode_calls;
        }
        state_->permit.notify_all();
        return {};
    }

    result<void> finish_vocode(std::span<std::vector<float>> out) override {
        device_.reset();
        if (out.size() != pcm_.size()) return make_error(error_kind::internal, "fake: finish_vocode() of another size");
        if (faults_.vocode_time > std::chrono::nanoseconds::zero()) {
            const auto end = vocode_started_ + faults_.vocode_time;
            std::this_thread::sleep_until(end);
            device_ = host_span{vocode_started_, end};
        }
        std::move(pcm_.begin(), pcm_.end(), out.begin());
        pcm_.clear();
        std::lock_guard lock(state_->mutex);
        --state_->vocoding;
        return {};
    }

    void release(int slot) override {
        std::lock_guard lock(state_->mutex);
        state_->released.push_back(slot);
    }

    bool failed() const override { return failed_; }
    std::optional<host_span> last_device_span() const override { return device_; }

    static ref::frame_codes codes_of(std::uint64_t seed, int frame) {
        ref::frame_codes c{};
        for (int g = 0; g < 16; ++g)
            c[static_cast<std::size_t>(g)] = static_cast<std::int32_t>((seed * 100 + static_cast<std::uint64_t>(frame) * 16 + g) % 2048);
        return c;
    }

private:
    backend_limits limits_;
    std::shared_ptr<shared_state> state_;
    fake_faults faults_;
    bool failed_ = false;
    std::optional<host_span> device_;
    std::vector<std::vector<float>> pcm_;  // of the last start_vocode(), until its finish
    std::chrono::steady_clock::time_point vocode_started_{};
};

}  // namespace megatts::test

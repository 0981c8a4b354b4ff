// A session_events that records everything, acts as the transport (acknowledges each chunk as
// written unless told to hold them), and lets a test wait for what it expects.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/graph/strand.h"
#include "pipeline/session/session_events.h"
#include "pipeline/session/tts_session.h"

namespace megatts::test {

struct recorded_chunk {
    audio_chunk chunk;                // bytes points nowhere after the call: see `bytes`
    std::vector<std::uint8_t> bytes;
};

class recording_events final : public session_events {
public:
    void on_started(const utterance_started& s) override { add([&] { started.push_back(s); log.push_back("started " + std::to_string(s.context)); }); }
    void on_audio(const audio_chunk& c) override {
        bool ack = false;
        add([&] {
            recorded_chunk r{c, {c.bytes.begin(), c.bytes.end()}};
            r.chunk.bytes = {};
            chunks.push_back(std::move(r));
            if (log.empty() || log.back() != "audio " + std::to_string(c.receipt.context))
                log.push_back("audio " + std::to_string(c.receipt.context));
            ack = !hold;
            if (hold) held.push_back(c.receipt);
            order.push_back("audio " + std::to_string(c.receipt.sequence));
        });
        if (!ack || !session) return;
        if (!ack_on) {
            session->audio_sent(c.receipt, true);
            return;
        }
        // As a socket transport does: the write's completion runs later, on the session's strand.
        ack_on->post([this, receipt = c.receipt] {
            add([&] { order.push_back("sent " + std::to_string(receipt.sequence)); });
            session->audio_sent(receipt, true);
        });
    }
    void on_metrics(const utterance_metrics& m) override { add([&] { metrics.push_back(m); log.push_back("metrics " + std::to_string(m.context)); }); }
    void on_done(const utterance_done& d) override { add([&] { done.push_back(d); log.push_back("done " + std::to_string(d.context)); }); }
    void on_stall(const stall_notice& n) override { add([&] { stalls.push_back(n); }); }
    void on_error(std::uint32_t context, const session_error& e) override {
        add([&] { errors.push_back({context, e}); log.push_back("error " + std::to_string(context)); });
    }

    // Waits (up to 20 s) until `pred` holds; false on timeout.
    bool wait(const std::function<bool(recording_events&)>& pred) {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, std::chrono::seconds(20), [&] { return pred(*this); });
    }
    template <class F>
    auto locked(F f) {
        std::lock_guard lock(mutex);
        return f(*this);
    }
    // Hands back every held receipt as written.
    void release_held() {
        std::vector<audio_receipt> receipts;
        {
            std::lock_guard lock(mutex);
            receipts.swap(held);
            hold = false;
        }
        for (auto& r : receipts) session->audio_sent(r, true);
    }

    // The concatenated payloads of `context`'s chunks.
    std::vector<std::uint8_t> bytes_of(std::uint32_t context) {
        std::lock_guard lock(mutex);
        std::vector<std::uint8_t> out;
        for (auto& c : chunks) {
            if (c.chunk.receipt.context == context) out.insert(out.end(), c.bytes.begin(), c.bytes.end());
        }
        return out;
    }

    tts_session* session = nullptr;  // set after open_session; the test owns the session
    bool hold = false;               // keep receipts instead of acknowledging them
    std::shared_ptr<strand> ack_on;  // acknowledge from a task posted here; null: at once

    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::string> log;  // event kinds in order, consecutive audio of one context once
    std::vector<std::string> order;  // "audio N" handed, "sent N" acknowledged (ack_on), in order
    std::vector<utterance_started> started;
    std::vector<recorded_chunk> chunks;
    std::vector<audio_receipt> held;
    std::vector<utterance_metrics> metrics;
    std::vector<utterance_done> done;
    std::vector<stall_notice> stalls;
    std::vector<std::pair<std::uint32_t, session_error>> errors;

private:
    template <class F>
    void add(F f) {
        {
            std::lock_guard lock(mutex);
            f();
        }
        changed.notify_all();
    }
};

}  // namespace megatts::test

// engine::busy_for(), which the daemon's watchdog reads: zero while the engine waits for work,
// growing while one unit of work does not finish, zero again once the engine is idle. A
// client that blocks in deliver() stands in for a backend step that hangs.
#include "pipeline/engine/engine.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "pipeline/engine/reference_backend.h"
#include "pipeline/stages/chat_template.h"
#include "pipeline/telemetry/metrics_registry.h"
#include "tests/pipeline/engine/tiny_model.h"
#include "tests/support/eventually.h"

namespace megatts {
namespace {

using namespace std::chrono_literals;

// Holds the engine thread inside its first codec frame until released; records the end.
class blocking_client final : public engine_client {
public:
    bool current(std::uint32_t) const override { return true; }
    bool ready_for_frames(std::size_t) const override { return true; }
    void deliver(frame f) override {
        std::unique_lock lock(mutex_);
        if (std::holds_alternative<codec_frame>(f.payload) && !held_once_) {
            held_once_ = true;
            holding_ = true;
            changed_.notify_all();
            changed_.wait(lock, [&] { return released_; });
            holding_ = false;
        }
        if (std::holds_alternative<end_of_audio>(f.payload)) ended_ = true;
        changed_.notify_all();
    }
    void queue(frame f) override { deliver(std::move(f)); }
    void wake() override {}

    bool wait_holding() {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, 20s, [&] { return holding_; });
    }
    void release() {
        std::lock_guard lock(mutex_);
        released_ = true;
        changed_.notify_all();
    }
    bool wait_ended() {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, 20s, [&] { return ended_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool held_once_ = false;
    bool holding_ = false;
    bool released_ = false;
    bool ended_ = false;
};

TEST_CASE("busy_for is zero while idle and grows while a step does not finish", "[engine]") {
    metrics_registry registry;
    auto metrics = pipeline_metrics::create(registry);
    REQUIRE(metrics.ok());
    auto e = engine::create(test::tiny_model(), make_reference_backend(test::tiny_model(), 2, 0),
                            {.lead_limit = 0ms, .first_audio_yield = 0ms}, *metrics);
    REQUIRE(e.ok());
    auto& eng = **e;
    // The thread's first pass steps an empty batch before it waits, so idle is reached, not
    // given, right after create().
    CHECK(test::eventually([&] { return eng.busy_for() == std::chrono::steady_clock::duration::zero(); }));

    auto client = std::make_shared<blocking_client>();
    const std::string text = "Hello.";
    auto ids = test::tiny_model().tokenizer.encode(std::string(k_template_head) + text + std::string(k_template_tail));
    REQUIRE(ids.ok());
    const engine_request request{"ryan", "english", {.seed = 1}, text_layout::non_streaming, 4};
    auto job = std::make_shared<engine_job>(frame_header{1, 0, 1, {}}, request, client);
    job->add_ids(ids.value(), true);
    REQUIRE(eng.submit(job) == engine::admission::accepted);

    REQUIRE(client->wait_holding());
    const auto first = eng.busy_for();
    std::this_thread::sleep_for(20ms);
    const auto later = eng.busy_for();
    CHECK(first > std::chrono::steady_clock::duration::zero());
    CHECK(later >= first + 20ms);

    client->release();
    REQUIRE(client->wait_ended());
    CHECK(test::eventually([&] { return eng.busy_for() == std::chrono::steady_clock::duration::zero(); }));
}

}  // namespace
}  // namespace megatts

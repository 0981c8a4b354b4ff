#include "daemon/server/send_queue.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

constexpr std::int64_t frame_us = 20000;  // one 20 ms packet

outgoing_message event(std::uint32_t context, std::uint8_t tag = 0) {
    return {.role = message_role::event, .context = context, .bytes = {tag}};
}

outgoing_message audio(std::uint32_t context, std::uint32_t sequence) {
    return {.role = message_role::audio,
            .context = context,
            .bytes = {static_cast<std::uint8_t>(sequence)},
            .receipt = audio_receipt{.context = context, .sequence = sequence, .duration_us = frame_us}};
}

outgoing_message audio_end(std::uint32_t context) {
    return {.role = message_role::audio_end, .context = context};
}

// Takes everything that may leave now, as (role, context) pairs.
std::vector<std::pair<message_role, std::uint32_t>> drain(send_queue& q) {
    std::vector<std::pair<message_role, std::uint32_t>> out;
    while (q.next()) {
        const auto m = q.take();
        out.emplace_back(m.role, m.context);
    }
    return out;
}

TEST_CASE("messages leave in the order pushed, and audio is counted in microseconds", "[send_queue]") {
    send_queue q(1'000'000, 8);
    CHECK(q.push(event(1)));
    CHECK(q.push(audio(1, 0)));
    CHECK(q.push(audio(1, 1)));
    CHECK(q.queued_audio_us() == 2 * frame_us);
    CHECK(q.take().role == message_role::event);
    CHECK(q.take().receipt->sequence == 0);
    CHECK(q.queued_audio_us() == frame_us);
    CHECK(q.take().receipt->sequence == 1);
    CHECK(q.empty());
    CHECK(q.next() == nullptr);
}

TEST_CASE("push reports the hard limit of audio and the event limit", "[send_queue]") {
    send_queue q(3 * frame_us, 2);
    CHECK(q.push(audio(1, 0)));
    CHECK(q.push(audio(1, 1)));
    CHECK(q.push(audio(1, 2)));
    CHECK_FALSE(q.push(audio(1, 3)));
    send_queue e(frame_us, 2);
    CHECK(e.push(event(0)));
    CHECK(e.push(event(0)));
    CHECK_FALSE(e.push(event(0)));
}

TEST_CASE("a context's end goes before the next context's waiting messages", "[send_queue]") {
    send_queue q(1'000'000, 8);
    CHECK(q.push(audio(1, 0)));
    CHECK(q.take().context == 1);  // context 1 is now on the wire
    CHECK(q.push(event(2)));       // started of context 2
    CHECK(q.push(audio(2, 0)));
    CHECK(q.push(event(0)));       // a stall, about the connection
    // Context 2's audio waits: context 1 has not ended.
    CHECK(q.next()->role == message_role::event);
    CHECK(q.take().context == 2);
    CHECK(q.next() == nullptr);
    CHECK(q.push_context_end(audio_end(1), event(1, 42)));
    const auto order = drain(q);
    REQUIRE(order.size() == 4);
    CHECK(order[0] == std::pair{message_role::audio_end, 1u});
    CHECK(order[1] == std::pair{message_role::event, 1u});  // done of 1
    CHECK(order[2] == std::pair{message_role::audio, 2u});
    CHECK(order[3] == std::pair{message_role::event, 0u});
}

TEST_CASE("drop_audio removes queued audio only, returns its receipts, and releases the hold", "[send_queue]") {
    send_queue q(1'000'000, 8);
    CHECK(q.push(audio(1, 0)));
    CHECK(q.take().context == 1);
    CHECK(q.push(audio(1, 1)));
    CHECK(q.push(event(1)));
    CHECK(q.push(audio(1, 2)));
    CHECK(q.push(audio(2, 0)));
    const auto dropped = q.drop_audio();
    REQUIRE(dropped.size() == 3);
    CHECK(dropped[0].sequence == 1);
    CHECK(dropped[2].context == 2);
    CHECK(q.queued_audio_us() == 0);
    CHECK(q.push(audio(3, 0)));
    const auto order = drain(q);
    REQUIRE(order.size() == 2);
    CHECK(order[0] == std::pair{message_role::event, 1u});
    CHECK(order[1] == std::pair{message_role::audio, 3u});
}

TEST_CASE("memory stays bounded by the limits under a reader that never takes", "[send_queue]") {
    send_queue q(2'000'000, 64);  // 2 s of audio
    int accepted = 0;
    while (q.push(audio(1, static_cast<std::uint32_t>(accepted))) && accepted < 1'000'000) ++accepted;
    CHECK(accepted == 100);  // 2 s of 20 ms packets; the 101st passes the limit
}

}  // namespace
}  // namespace megatts

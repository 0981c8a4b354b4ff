#include "pipeline/graph/frame_queue.h"

#include <catch2/catch.hpp>

#include <string>

namespace megatts {
namespace {

frame text(std::uint32_t epoch, std::string s) { return frame{{1, epoch, 1, {}}, text_chunk{std::move(s)}}; }
frame cancel(std::uint32_t epoch) { return frame{{1, epoch, 0, {}}, cancel_request{}}; }

std::string text_of(const std::optional<frame>& f) {
    REQUIRE(f);
    return std::get<text_chunk>(f->payload).text;
}

TEST_CASE("frame classes follow the payload type", "[graph]") {
    CHECK(class_of(text(0, "a")) == frame_class::data);
    CHECK(class_of(frame{{}, end_of_text{}}) == frame_class::control);
    CHECK(class_of(frame{{}, end_of_audio{}}) == frame_class::control);
    CHECK(class_of(cancel(0)) == frame_class::system);
    CHECK(class_of(frame{{}, mark_report{ttfa_mark::admitted}}) == frame_class::system);
}

TEST_CASE("the ordered lane keeps order and refuses pushes past its limit", "[graph]") {
    gauge depth;
    frame_queue q({.system = 1, .ordered = 2}, &depth);
    CHECK(q.push(text(0, "a")));
    CHECK(q.push(text(0, "b")));
    CHECK(q.has_room(0));
    CHECK_FALSE(q.has_room(1));
    CHECK_FALSE(q.push(text(0, "c")));  // refused, not queued
    CHECK(depth.value() == 2);
    CHECK(text_of(q.pop(0)) == "a");
    CHECK(text_of(q.pop(0)) == "b");
    CHECK_FALSE(q.pop(0));
    CHECK(depth.value() == 0);
}

TEST_CASE("system frames bypass queued data and have their own bound", "[graph]") {
    frame_queue q({.system = 1, .ordered = 4});
    REQUIRE(q.push(text(0, "a")));
    REQUIRE(q.push(cancel(1)));
    CHECK_FALSE(q.push(cancel(2)));  // a full system lane refuses too: never a silent drop
    auto first = q.pop(0);
    REQUIRE(first);
    CHECK(std::holds_alternative<cancel_request>(first->payload));
    CHECK(text_of(q.pop(0)) == "a");
}

TEST_CASE("data and control frames of a stale epoch are dropped at dequeue", "[graph]") {
    gauge depth;
    frame_queue q({.system = 2, .ordered = 8}, &depth);
    REQUIRE(q.push(text(0, "old")));
    REQUIRE(q.push(frame{{1, 0, 1, {}}, end_of_text{}}));
    REQUIRE(q.push(text(1, "new")));
    REQUIRE(q.push(frame{{1, 0, 0, {}}, error_report{}}));  // system: kept whatever its epoch
    auto first = q.pop(1);
    REQUIRE(first);
    CHECK(std::holds_alternative<error_report>(first->payload));
    CHECK(text_of(q.pop(1)) == "new");
    CHECK_FALSE(q.pop(1));
    CHECK(q.size() == 0);
    CHECK(depth.value() == 0);
}

TEST_CASE("a queue's frames leave the depth gauge when it is destroyed", "[graph]") {
    gauge depth;
    {
        frame_queue q({.system = 1, .ordered = 2}, &depth);
        REQUIRE(q.push(text(0, "a")));
        CHECK(depth.value() == 1);
    }
    CHECK(depth.value() == 0);
}

}  // namespace
}  // namespace megatts

#include "pipeline/graph/thread_pool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <vector>

namespace megatts {
namespace {

TEST_CASE("a strand runs its tasks one at a time in order; strands run side by side", "[graph]") {
    constexpr int tasks = 2000;
    std::vector<int> order_a, order_b;
    std::atomic<int> inside_a{0};
    bool overlapped = false;
    std::promise<void> done_a, done_b;
    {
        thread_pool pool(4);
        auto a = pool.make_strand();
        auto b = pool.make_strand();
        for (int i = 0; i < tasks; ++i) {
            a->post([&, i] {
                if (inside_a.fetch_add(1) != 0) overlapped = true;
                order_a.push_back(i);
                inside_a.fetch_sub(1);
                if (i == tasks - 1) done_a.set_value();
            });
            b->post([&, i] {
                order_b.push_back(i);
                if (i == tasks - 1) done_b.set_value();
            });
        }
        done_a.get_future().wait();
        done_b.get_future().wait();
    }
    CHECK_FALSE(overlapped);
    REQUIRE(order_a.size() == tasks);
    REQUIRE(order_b.size() == tasks);
    for (int i = 0; i < tasks; ++i) {
        CHECK(order_a[static_cast<std::size_t>(i)] == i);
        CHECK(order_b[static_cast<std::size_t>(i)] == i);
    }
}

TEST_CASE("post never runs the task inline", "[graph]") {
    thread_pool pool(1);
    auto s = pool.make_strand();
    std::promise<void> ran;
    std::atomic<bool> posted_returned{false};
    bool inline_run = true;
    s->post([&] {
        s->post([&] {
            inline_run = !posted_returned;
            ran.set_value();
        });
        posted_returned = true;
    });
    ran.get_future().wait();
    CHECK_FALSE(inline_run);
}

TEST_CASE("the pool runs what was posted before it is destroyed", "[graph]") {
    std::atomic<int> ran{0};
    {
        thread_pool pool(2);
        auto s = pool.make_strand();
        for (int i = 0; i < 100; ++i) s->post([&] { ++ran; });
    }
    CHECK(ran == 100);
}

}  // namespace
}  // namespace megatts

// unit: kernels/vocoder/implicit_pipeline.h, on the CPU: a model of conv_implicit.cuh's
// cp.async groups (which group each step's weights and each chunk's rows land in, and which
// groups a wait leaves pending) for 1-8 taps, 1-6 steps requested ahead and 1-4 chunks a split.
// Every step's weights have landed after its wait, every chunk's rows after its first tap's
// waits, and implicit_chunk_pending() is as loose as that allows: one more pending group
// would leave the chunk's rows in flight wherever the chunk's first tap needs the extra wait.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "kernels/vocoder/implicit_pipeline.h"

using namespace megatts::voc;

namespace {

// The kernel's issue order, as groups: group g holds what was issued before the g-th commit.
struct pipeline_model {
    int taps, ahead, steps;
    std::vector<int> weights_group;  // [step]
    std::vector<int> chunk_group;    // [chunk]

    pipeline_model(int t, int a, int chunks) : taps(t), ahead(a), steps(t * chunks) {
        weights_group.assign(static_cast<std::size_t>(steps), -1);
        chunk_group.assign(static_cast<std::size_t>(chunks), -1);
        // Prologue: the first `ahead` steps' weights and chunk 0, then `ahead` commits.
        for (int s = 0; s < std::min(ahead, steps); ++s) weights_group[static_cast<std::size_t>(s)] = 0;
        chunk_group[0] = 0;
        // Step s commits group ahead + s: the next chunk's rows at a first tap, then step
        // s + ahead's weights.
        for (int s = 0; s < steps; ++s) {
            const int group = ahead + s;
            if (s % taps == 0 && s + taps < steps) chunk_group[static_cast<std::size_t>(s / taps + 1)] = group;
            if (s + ahead < steps) weights_group[static_cast<std::size_t>(s + ahead)] = group;
        }
    }

    // Whether group g has landed at step s after a wait that leaves `pending` groups pending:
    // ahead + s groups are committed by then, all but the newest `pending` complete.
    bool landed(int g, int s, int pending) const { return g <= ahead + s - 1 - pending; }
};

}  // namespace

TEST_CASE("implicit convs: each step's weights and each chunk's rows have landed when used") {
    long checks = 0;
    for (int taps = 1; taps <= 8; ++taps)
        for (int ahead = 1; ahead <= 6; ++ahead)
            for (int chunks = 1; chunks <= 4; ++chunks) {
                CAPTURE(taps, ahead, chunks);
                const pipeline_model m(taps, ahead, chunks);
                for (int s = 0; s < m.steps; ++s) {
                    REQUIRE(m.weights_group[static_cast<std::size_t>(s)] >= 0);
                    REQUIRE(m.landed(m.weights_group[static_cast<std::size_t>(s)], s, ahead - 1));
                    if (s % taps != 0) continue;
                    const int chunk_group = m.chunk_group[static_cast<std::size_t>(s / taps)];
                    REQUIRE(chunk_group >= 0);
                    // The kernel's waits at a first tap: ahead - 1 pending, then, with fewer
                    // taps than ahead, implicit_chunk_pending().
                    const bool extra = taps < ahead;
                    const int pending = extra ? implicit_chunk_pending(taps, ahead) : ahead - 1;
                    REQUIRE(pending >= 0);
                    REQUIRE(m.landed(chunk_group, s, pending));
                    // As loose as it may be: one group more pending and a chunk after the first
                    // (whose rows came with the prologue's first group) would still be in flight.
                    if (extra && s > 0) REQUIRE_FALSE(m.landed(chunk_group, s, pending + 1));
                    ++checks;
                }
            }
    REQUIRE(checks > 100);
}

TEST_CASE("implicit convs: the chunk wait is stricter than a step's exactly where that one falls short") {
    for (int taps = 1; taps <= 8; ++taps)
        for (int ahead = 1; ahead <= 6; ++ahead) {
            CAPTURE(taps, ahead);
            const pipeline_model m(taps, ahead, 3);
            // The second chunk's first tap: the step's own wait covers its rows iff taps >= ahead
            // (the kernel's condition for the extra wait), and only there is
            // implicit_chunk_pending() no stricter than that wait.
            const bool covered = m.landed(m.chunk_group[1], taps, ahead - 1);
            REQUIRE(covered == (taps >= ahead));
            REQUIRE(covered == (implicit_chunk_pending(taps, ahead) == ahead - 1));
        }
}

// unit: kernels/vocoder/implicit_staging.h, the addressing of the CUDA vocoder's implicit
// convs (conv_implicit.cuh), on the CPU: for tiles of 64 and 128 rows over calls of
// 1..64 items of n rows a frame (n shorter than a tile, longer, and not a multiple of
// it), sessions at different frames (some at frame 0, whose left context is the zero
// padding), every tile row and every tap offset reads the staged row that holds the
// input `halo - offset` rows before it in its own session; every staged row lies in one
// run and holds the time its run's layout says; nothing is read past the rows a tile
// stages, which is the count the host sizes shared memory by.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include "kernels/vocoder/implicit_staging.h"

using namespace megatts::voc;

namespace {

struct staging_case {
    int n, bm, halo, items;
};

// The frame each item of a call decodes: a mix, with frame 0 (times before 0 are padding).
int frame_of(int item) { return (item * 7) % 5; }

// Checks every tile of a call; returns how many (row, offset) reads it checked.
long check_call(const staging_case& c) {
    const int M = c.items * c.n;
    long reads = 0;
    for (int m0 = 0; m0 < M; m0 += c.bm) {
        const tile_staging st{m0, std::min(c.bm, M - m0), c.n, c.halo};
        const int staged = staged_rows(st);
        const int runs = (m0 + st.valid - 1) / c.n - m0 / c.n + 1;
        REQUIRE(staged == st.valid + runs * c.halo);

        // Staged rows: run by run, each the run's halo rows then its rows, in time order.
        auto run_rows = [&](int j) {
            const int end = std::min(st.valid, (m0 / c.n + j + 1) * c.n - m0);
            return c.halo + end - run_first_row(st, j);
        };
        int run = 0, at_in_run = 0;
        for (int i = 0; i < staged; ++i) {
            const int j = staged_run(st, i);
            if (j != run) {
                REQUIRE(at_in_run == run_rows(run));  // the run before ended whole
                REQUIRE(j == run + 1);
                run = j;
                at_in_run = 0;
            }
            const int item = m0 / c.n + j;
            const long t0 = static_cast<long>(frame_of(item)) * c.n + (m0 + run_first_row(st, j)) % c.n - c.halo;
            REQUIRE(staged_time(st, i, j, frame_of(item)) == t0 + at_in_run);
            ++at_in_run;
        }
        REQUIRE(run == runs - 1);
        REQUIRE(at_in_run == run_rows(run));

        // Every read: tile row r at tap offset o (tap k: o = k x dilation) is the input
        // halo - o rows before row r, in row r's session.
        for (int r = 0; r < c.bm; ++r) {
            const int base = tap0_staged_row(st, r);
            REQUIRE(base >= 0);
            REQUIRE(base + c.halo < staged);
            if (r >= st.valid) continue;  // past the call: read but never stored
            const int m = m0 + r, item = m / c.n, j = item - m0 / c.n;
            const long t = static_cast<long>(frame_of(item)) * c.n + m % c.n;
            for (int o = 0; o <= c.halo; ++o) {
                const int i = base + o;
                REQUIRE(staged_run(st, i) == j);
                REQUIRE(staged_time(st, i, j, frame_of(item)) == t - (c.halo - o));
                ++reads;
            }
        }
    }
    return reads;
}

}  // namespace

TEST_CASE("implicit conv staging: every tap of every row reads its own session's input", "[unit]") {
    long reads = 0;
    int calls = 0;
    // The 12 Hz decoder's rows per frame at each block (32, 160, 640, 1920), and shapes
    // around them; halos of its 7-tap convs at dilations 1, 3, 9 (6, 18, 54), and 3.
    for (int n : {1, 3, 4, 32, 48, 100, 128, 160, 640, 1920})
        for (int bm : {64, 128})
            for (int halo : {3, 6, 18, 54})
                for (int items : {1, 2, 3, 5, 64}) {
                    if (static_cast<long>(items) * n > 20000 && items > 3) continue;  // keep it quick
                    reads += check_call({n, bm, halo, items});
                    ++calls;
                }
    std::printf("implicit staging: %d calls, %ld (row, tap offset) reads checked\n", calls, reads);
    CHECK(reads > 0);
}

TEST_CASE("implicit conv staging: the host's count is the kernel's", "[unit]") {
    // A tile inside one session's rows stages its rows and one halo; a tile across k
    // sessions' rows stages k halos.
    CHECK(staged_rows_of_tile(0, 128, 640, 54) == 128 + 54);
    CHECK(staged_rows_of_tile(128, 128, 160, 54) == 128 + 2 * 54);
    CHECK(staged_rows_of_tile(0, 128, 32, 6) == 128 + 4 * 6);
    CHECK(staged_rows_of_tile(0, 40, 32, 6) == 40 + 2 * 6);  // the last tile of a call of 40 rows
}

// batch_scheduler: which of the utterances that could take a frame now go into this engine
// step, and in what order: the policy that protects first audio and keeps every session ahead
// of its listener (DESIGN.md §1, issue 5).
//
//   - paced utterances at least lead_limit ahead of their real-time playback sit the step out
//     (they bound their client's buffer and leave the batch to others until playback catches up);
//   - with a lead limit, paced utterances at least join_lead ahead do not call for a step: when
//     only such utterances could go, no step runs (they join the next step another one calls
//     for, so that a step's fixed cost is shared by more of them; the engine steps when the
//     first of them falls below join_lead);
//   - utterances that have no frame yet (prefill and first frame) go first, in arrival order;
//   - in a step that has any of those, utterances at least yield_lead ahead of playback sit it
//     out too, so the first frame costs a small step, but only while every utterance that
//     could go fits in one batch: past that the step is full either way, and those who sat out
//     would crowd the next one (at 50 requests/s, sitting out a step in two cost thousands of
//     underruns: bench/RESULTS.md);
//   - the rest go by ascending lead, the one closest to an underrun first (ties: arrival order);
//   - the batch is filled in that order up to max_batch items and max_rows talker rows; an
//     utterance whose rows do not fit waits for the next step and those after it may still go.
//
// Contract: pure; any thread. pick_batch() returns positions in `candidates`, in step order;
// empty when none of them calls for a step.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace megatts {

struct batch_candidate {
    bool first_frame = false;            // no frame yet: its prefill and first frame
    std::chrono::microseconds lead{};    // audio generated minus audio played (0 before its first frame)
    bool paced = true;                   // held to the lead limit (a real-time listener)
    int rows = 1;                        // talker rows its frame takes
};

struct batch_policy {
    int max_batch = 1;
    int max_rows = 0;                    // 0: unbounded
    std::chrono::microseconds lead_limit{0};  // 0: none
    std::chrono::microseconds yield_lead{0};  // 0: nobody yields to a first frame
    std::chrono::microseconds join_lead{0};   // 0: every candidate calls for a step
};

// Whether `c` sits out every step until its lead drops below the limit.
bool lead_limited(const batch_candidate& c, const batch_policy& policy);

// Whether `c` calls for a step, or only joins one another candidate calls for.
bool calls_for_step(const batch_candidate& c, const batch_policy& policy);

std::vector<std::size_t> pick_batch(std::span<const batch_candidate> candidates, const batch_policy& policy);

}  // namespace megatts

// phase_log: where one frame launch's time goes, phase by phase (diagnosis, `bench
// kernels --phases`). The persistent kernel runs as a chain of grid-wide phases; when
// asked, block 0 stamps its SM clock and the global timer each time it leaves a
// barrier, so a phase's span is the time from the end of the previous phase's
// barrier to the end of its own, what the whole grid spent on it. Every block also
// counts, on its own SM clock, the cycles from leaving the previous barrier until all its
// threads are done with the phase: the slowest block's count is the phase's work, the rest
// of the span the barrier (the last arrival reaching every block) and the blocks' skew.
//
// Contract: POD shared by host and device. The kernel writes marks[0] at its start
// (kind = phase_kind::start) and marks[i] when it leaves barrier i, never more than
// k_max_phase_marks in all, and work[(i - 1) * blocks + b] for block b's phase i; the host
// turns them into spans (megakernel::read_phases). Recording costs block 0 one store per
// phase and every block a block barrier and one store per phase.
#pragma once

namespace megatts {

enum class phase_kind : int {
    start,
    inputs,
    talker_qkv,
    talker_kv,
    talker_attention,
    talker_o,
    talker_gate_up,
    talker_down,
    talker_head,
    sample_codebook0,
    cp_input,
    cp_qkv,
    cp_kv,
    cp_attention,
    cp_o,
    cp_gate_up,
    cp_down,
    cp_head,
    cp_sample,
    next_input,
    publish,
    count
};

// A decoder layer's phases are the same for both stacks, in the same order.
inline constexpr phase_kind layer_phase(bool code_predictor, int offset) {
    return static_cast<phase_kind>(static_cast<int>(code_predictor ? phase_kind::cp_qkv : phase_kind::talker_qkv) +
                                   offset);
}

inline constexpr const char* phase_name(phase_kind k) {
    constexpr const char* names[] = {
        "start",          "inputs",           "talker qkv",        "talker kv store", "talker attention",
        "talker o-proj",  "talker gate/up",   "talker down",       "talker head",     "sample codebook 0",
        "cp input",       "cp qkv",           "cp kv store",       "cp attention",    "cp o-proj",
        "cp gate/up",     "cp down",          "cp heads",          "cp sample",       "next input",
        "publish",
    };
    static_assert(sizeof(names) / sizeof(names[0]) == static_cast<int>(phase_kind::count));
    return names[static_cast<int>(k)];
}

struct phase_mark {
    unsigned long long clock;  // block 0's SM clock (clock64)
    unsigned long long ns;     // %globaltimer
    int kind;                  // phase_kind
    int pad_;
};

inline constexpr int k_max_phase_marks = 1024;

// Where a launch logs its phases (null: no log).
struct phase_log {
    phase_mark* marks;   // [k_max_phase_marks]
    unsigned int* work;  // [k_max_phase_marks, blocks]: SM cycles each block worked on each phase
};

}  // namespace megatts

// gpu suite: the CUDA megakernel against the CPU reference at full 0.6B size.
//
// The model is a make-checkpoint random checkpoint (MEGATTS_GPU_MODEL names one; else the
// test writes /tmp/megatts-gpu-0.6b once). The reference runs greedy on three prompts;
// the megakernel is then teacher-forced with the reference's codes and must reproduce,
// frame by frame, the talker hidden state, the codec logits and all 15 code-predictor
// logits within 2e-2 relative, with sessions admitted at different frames and
// positions, at B = 1, 3, 64 and 128; a frame that two cases both run must come out with the
// same bits in launches of different sizes. Sampling is checked by feeding the CPU sampler the
// GPU's logits and counters; determinism by running the same 1000 frames twice. The
// [sanitize] case is the short batched generation that bench/gpu-run runs under
// compute-sanitizer (memcheck, racecheck, synccheck).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <span>

#include <catch2/catch.hpp>

#include "kernels/common/sampling_math.h"
#include "kernels/megakernel/megakernel.h"
#include "kernels/reference/generator.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/megakernel_loader.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/model/reference_loader.h"
#include "pipeline/text/bpe_tokenizer.h"
#include "pipeline/text/tts_prompt_ids.h"
#include "tests/support/gpu_model.h"
#include "tests/support/tensor_compare.h"

using namespace megatts;

namespace {

constexpr int k_frames = 32;
constexpr double k_tol = 2e-2;

// One prompt's reference trajectory: greedy codes and every per-frame intermediate.
struct trajectory {
    prompt_plan plan;
    std::vector<ref::frame_codes> codes;
    ref::generation_trace trace;
};

struct fixture {
    checkpoint ckpt;
    bpe_tokenizer tokenizer;
    ref::talker_weights talker;
    ref::code_predictor_weights cp;
    std::unique_ptr<megakernel> gpu;
    std::vector<trajectory> trajectories;
    // Each (trajectory, frame)'s hidden state, codec logits and code-predictor logits as the
    // teacher-forced cases first saw them: the same inputs in launches of other sizes must give
    // the same bits (attention teams of 8 to 1 warps; past 64 talker rows the kernel's
    // instantiation with row groups), so that a session's audio does not depend on who else is
    // in the batch.
    std::map<std::pair<int, int>, std::vector<float>> first_outputs;
};

fixture& shared() {
    static std::unique_ptr<fixture> f;
    if (f) return *f;
    auto c = checkpoint::open(test::gpu_model_dir());
    REQUIRE(c.ok());
    auto tok = bpe_tokenizer::load(c->dir());
    REQUIRE(tok.ok());
    f.reset(new fixture{std::move(c.value()), std::move(tok.value()), {}, {}, {}, {}, {}});
    f->talker = load_talker_weights(f->ckpt);
    f->cp = load_code_predictor_weights(f->ckpt);
    const auto& cfg = f->ckpt.config();
    auto gpu = megakernel::create(megakernel_tensors_from(f->ckpt), {.slots = k_megakernel_max_sessions, .max_positions = 1536},
                                  megakernel_policy_from(cfg), cfg.talker.body.rms_eps, cfg.talker.body.rope_theta);
    INFO((gpu ? "" : gpu.err().message));
    REQUIRE(gpu.ok());
    f->gpu = std::move(gpu.value());

    const std::vector<std::tuple<const char*, const char*, const char*, text_layout>> prompts{
        {"Hello world, this is the megakernel parity test.", "ryan", "english", text_layout::non_streaming},
        {"你好，这是一个测试。", "vivian", "chinese", text_layout::non_streaming},
        {"Streaming text arrives one token per frame here.", "serena", "auto", text_layout::streaming},
    };
    for (const auto& [text, voice, language, layout] : prompts) {
        auto ids = tokenize_tts_prompt(f->tokenizer, text);
        REQUIRE(ids.ok());
        auto plan = build_prompt(cfg, ids->ids, voice, language, layout);
        REQUIRE(plan.ok());
        trajectory t{std::move(plan.value()), {}, {}};
        ref::generator gen(f->talker, f->cp, make_generation_options(cfg, {.greedy = true}), &t.trace);
        gen.prefill(t.plan.rows);
        for (int frame = 0; frame < k_frames; ++frame) {
            auto codes = gen.next_frame(t.plan.text_track(frame));
            REQUIRE(codes.has_value());  // random weights put EOS far down the ranking
            t.codes.push_back(*codes);
        }
        f->trajectories.push_back(std::move(t));
    }
    return *f;
}

std::span<const float> row(const std::vector<float>& v, std::size_t index, std::size_t width) {
    return std::span(v).subspan(index * width, width);
}

// One GPU session following a reference trajectory, admitted at `start` (a launch index).
struct session {
    int slot;
    int trajectory;
    int start;
    int frame = 0;
};

// Runs the sessions teacher-forced until each made k_frames frames; checks every frame. Each
// round, the sessions due a frame go into launches in order, as many as fit one launch's
// talker rows (a prompt's rows on a session's first frame, else one) and sessions. Returns the
// most talker rows of one launch.
int run_teacher_forced(fixture& f, std::vector<session> sessions) {
    const auto& cfg = f.ckpt.config();
    const std::size_t h = cfg.talker.body.hidden, vocab = cfg.talker.codec_vocab;
    const std::size_t cpv = cfg.code_predictor.vocab, passes = cfg.code_predictor.steps();
    double worst_hidden = 0, worst_logits = 0, worst_cp = 0;
    int widest = 0, most_rows = 0, repeated = 0, repeated_same = 0;
    auto launch = [&](std::vector<session*>& active) {
        std::vector<frame_item> items;
        for (session* s : active) {
            const auto& t = f.trajectories[static_cast<std::size_t>(s->trajectory)];
            if (s->frame == 0) REQUIRE(f.gpu->set_prompt(s->slot, t.plan.rows).ok());
            items.push_back({.slot = s->slot, .frame = s->frame, .seed = 1, .talker = {.greedy = true},
                             .code_predictor = {.greedy = true}, .repetition_penalty = cfg.sampling.repetition_penalty,
                             .text_id = t.plan.text_track(s->frame),
                             .forced_codes = t.codes[static_cast<std::size_t>(s->frame)].data()});
        }
        widest = std::max(widest, static_cast<int>(items.size()));
        std::vector<std::int32_t> codes(items.size() * 16);
        auto ran = f.gpu->run_frame(items, codes);
        INFO((ran ? "" : ran.err().message));
        REQUIRE(ran.ok());
        auto dbg = f.gpu->read_debug(static_cast<int>(items.size()));
        REQUIRE(dbg.ok());
        for (std::size_t i = 0; i < active.size(); ++i) {
            auto& s = *active[i];
            const auto& t = f.trajectories[static_cast<std::size_t>(s.trajectory)];
            const auto fr = static_cast<std::size_t>(s.frame);
            auto rel = [](std::span<const float> x, std::span<const float> r) { return test::compare(x, r).rel; };
            worst_hidden = std::max(worst_hidden, rel(row(dbg->hidden, i, h), row(t.trace.talker_hidden, fr, h)));
            worst_logits = std::max(worst_logits, rel(row(dbg->logits, i, vocab), row(t.trace.logits_raw, fr, vocab)));
            worst_cp = std::max(worst_cp, rel(row(dbg->cp_logits, i, passes * cpv), t.trace.cp_logits[fr]));
            for (int g = 0; g < 16; ++g) CHECK(codes[i * 16 + static_cast<std::size_t>(g)] == t.codes[fr][static_cast<std::size_t>(g)]);
            std::vector<float> outputs;
            for (auto part : {row(dbg->hidden, i, h), row(dbg->logits, i, vocab), row(dbg->cp_logits, i, passes * cpv)})
                outputs.insert(outputs.end(), part.begin(), part.end());
            const auto [first, inserted] = f.first_outputs.try_emplace({s.trajectory, s.frame}, outputs);
            if (!inserted) {
                ++repeated;
                repeated_same += first->second == outputs;  // float ==: every bit
            }
            ++s.frame;
        }
        active.clear();
    };
    for (int round = 0;; ++round) {
        std::vector<session*> due;
        for (auto& s : sessions)
            if (round >= s.start && s.frame < k_frames) due.push_back(&s);
        if (due.empty()) {
            if (std::all_of(sessions.begin(), sessions.end(), [](const session& s) { return s.frame >= k_frames; }))
                break;
            continue;
        }
        std::vector<session*> active;
        int rows = 0;
        for (session* s : due) {
            const auto& t = f.trajectories[static_cast<std::size_t>(s->trajectory)];
            const int r = s->frame == 0 ? static_cast<int>(t.plan.rows.size()) : 1;
            if (rows + r > k_megakernel_max_rows || static_cast<int>(active.size()) == k_megakernel_max_sessions) {
                launch(active);
                rows = 0;
            }
            active.push_back(s);
            rows += r;
            most_rows = std::max(most_rows, rows);
        }
        launch(active);
    }
    for (auto& s : sessions) f.gpu->release(s.slot);
    std::printf("teacher-forced, %zu sessions x %d frames, up to %d a launch and %d talker rows: max rel error hidden "
                "%.3g, codec logits %.3g, code-predictor logits %.3g\n",
                sessions.size(), k_frames, widest, most_rows, worst_hidden, worst_logits, worst_cp);
    std::printf("  %d of %d repeated frames bit-identical to the same frame run before (in launches of any size)\n",
                repeated_same, repeated);
    CHECK(worst_hidden <= k_tol);
    CHECK(worst_logits <= k_tol);
    CHECK(worst_cp <= k_tol);
    CHECK(repeated_same == repeated);
    return most_rows;
}

// One greedy frame of the session in `slot`, alone in its launch, with trajectory t's text track.
std::vector<std::int32_t> greedy_frame_alone(fixture& f, int slot, const trajectory& t, int frame) {
    frame_item item{.slot = slot, .frame = frame, .talker = {.greedy = true}, .code_predictor = {.greedy = true},
                    .repetition_penalty = f.ckpt.config().sampling.repetition_penalty,
                    .text_id = t.plan.text_track(frame)};
    std::vector<std::int32_t> codes(16);
    REQUIRE(f.gpu->run_frame({&item, 1}, codes).ok());
    return codes;
}

}  // namespace

TEST_CASE("teacher-forced parity with the CPU reference at full 0.6B size, B = 1", "[gpu]") {
    run_teacher_forced(shared(), {{.slot = 0, .trajectory = 0, .start = 0}});
}

TEST_CASE("teacher-forced parity, B = 3, sessions at different positions", "[gpu]") {
    run_teacher_forced(shared(), {{.slot = 0, .trajectory = 0, .start = 0},
                                  {.slot = 1, .trajectory = 1, .start = 3},
                                  {.slot = 2, .trajectory = 2, .start = 7}});
}

TEST_CASE("teacher-forced parity, B = 64, admissions spread over 32 frames", "[gpu]") {
    std::vector<session> sessions;
    // Two prompts (~25 rows each) join per launch, next to up to 62 running sessions: <= 128 rows.
    for (int i = 0; i < 64; ++i) sessions.push_back({.slot = i, .trajectory = i % 3, .start = i / 2});
    run_teacher_forced(shared(), sessions);
}

TEST_CASE("teacher-forced parity, B = 128, the most sessions a launch takes", "[gpu]") {
    std::vector<session> sessions;
    // Sixteen prompts join in each of the first 8 rounds, at three prompt lengths: their rows and
    // the running sessions' fill launches of up to 256 rows (about ten prompts each); from round 8
    // all 128 sessions, at different positions, run in one launch a round.
    for (int i = 0; i < k_megakernel_max_sessions; ++i)
        sessions.push_back({.slot = i, .trajectory = i % 3, .start = i / 4 % 8});
    // Some launches pass 128 talker rows: prompts beside running sessions.
    CHECK(run_teacher_forced(shared(), sessions) > k_megakernel_max_prompt_rows);
}

TEST_CASE("free-running greedy codes follow the reference until a near-tie", "[gpu]") {
    auto& f = shared();
    const auto& t = f.trajectories[0];
    REQUIRE(f.gpu->set_prompt(0, t.plan.rows).ok());
    int same = 0;
    std::vector<std::int32_t> diverged;
    for (int frame = 0; frame < k_frames; ++frame) {
        auto codes = greedy_frame_alone(f, 0, t, frame);
        if (!std::equal(codes.begin(), codes.end(), t.codes[static_cast<std::size_t>(frame)].begin())) {
            diverged = std::move(codes);
            break;
        }
        ++same;
    }
    f.gpu->release(0);
    std::printf("free-running greedy: %d of %d frames identical to the CPU reference\n", same, k_frames);
    if (!diverged.empty()) {
        // Where the codes part: the reference's own scores for its code and for the kernel's (same
        // inputs up to this code), against the spread of those logits. The codes may part only at
        // a near-tie: a gap that the kernel's rounding, within the parity bound, can close.
        const auto fr = static_cast<std::size_t>(same);
        const auto& ref = t.codes[fr];
        const auto g = static_cast<std::size_t>(std::mismatch(diverged.begin(), diverged.end(), ref.begin()).first -
                                                diverged.begin());
        const auto& cfg = f.ckpt.config();
        const std::size_t vocab = cfg.talker.codec_vocab, cpv = cfg.code_predictor.vocab;
        const std::span<const float> logits =
            g == 0 ? row(t.trace.logits_raw, fr, vocab)
                   : std::span<const float>(t.trace.cp_logits[fr]).subspan((g - 1) * cpv, cpv);
        // Codebook 0 is chosen after the repetition penalty over the earlier frames' codes.
        auto score = [&](std::int32_t code) {
            float x = logits[static_cast<std::size_t>(code)];
            const bool seen = g == 0 && std::any_of(t.codes.begin(), t.codes.begin() + static_cast<long>(fr),
                                                    [&](const auto& c) { return c[0] == code; });
            const float p = cfg.sampling.repetition_penalty;
            return seen ? (x < 0 ? x * p : x / p) : x;
        };
        const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
        const double gap = score(ref[g]) - score(diverged[g]), fraction = gap / (*hi - *lo);
        std::printf("  parted at frame %zu, code group %zu: the reference's score of its code %d minus that of the "
                    "kernel's %d: %.3g (%.2g of the logits' range)\n",
                    fr, g, ref[g], diverged[g], gap, fraction);
        CHECK(fraction <= k_tol);
    }
}

TEST_CASE("the talker's attention split over blocks agrees with the walk by one block", "[gpu]") {
    // Alone, a session's attention is split over up to 8 blocks once its cache is long (past 128
    // positions, 64 or more a part); beside 8 other sessions there is no room and one block walks
    // it all. The same session, teacher-forced with the codes of its first run, through 450 frames
    // (3 parts from position 129, 8 from 449): hidden state and logits must agree as the CPU parity
    // tests require.
    auto& f = shared();
    const auto& cfg = f.ckpt.config();
    const std::size_t h = cfg.talker.body.hidden, vocab = cfg.talker.codec_vocab;
    constexpr int frames = 450, others = 8;
    const auto& t = f.trajectories[0];
    std::vector<std::vector<std::int32_t>> codes_of(frames);
    std::vector<std::vector<float>> hidden_of(frames), logits_of(frames);
    REQUIRE(f.gpu->set_prompt(0, t.plan.rows).ok());
    for (int frame = 0; frame < frames; ++frame) {
        const auto codes = greedy_frame_alone(f, 0, t, frame);
        // No EOS (its codes 1..15 are -1, which could not be forced): random weights rank it low.
        REQUIRE(std::all_of(codes.begin(), codes.end(), [](std::int32_t c) { return c >= 0; }));
        auto dbg = f.gpu->read_debug(1);
        REQUIRE(dbg.ok());
        codes_of[static_cast<std::size_t>(frame)] = codes;
        hidden_of[static_cast<std::size_t>(frame)].assign(dbg->hidden.begin(), dbg->hidden.begin() + static_cast<long>(h));
        logits_of[static_cast<std::size_t>(frame)].assign(dbg->logits.begin(), dbg->logits.begin() + static_cast<long>(vocab));
    }
    f.gpu->release(0);
    REQUIRE(f.gpu->positions(0) == 0);
    // Session s > 0 joins at launch s (one prompt a launch, within 128 rows), so from launch 8 on,
    // position 33 or so, every launch holds 9 sessions: 144 (row, head) pairs, more than the grid.
    double worst_hidden = 0, worst_logits = 0;
    for (int frame = 0; frame < frames; ++frame) {
        std::vector<frame_item> items;
        for (int s = 0; s <= std::min(frame, others); ++s) {
            const auto& ts = f.trajectories[static_cast<std::size_t>(s % 3)];
            const int own = frame - s;  // this session's frame index
            if (own == 0) REQUIRE(f.gpu->set_prompt(s, ts.plan.rows).ok());
            items.push_back({.slot = s, .frame = own, .talker = {.greedy = true}, .code_predictor = {.greedy = true},
                             .repetition_penalty = cfg.sampling.repetition_penalty,
                             .text_id = ts.plan.text_track(own),
                             .forced_codes = s == 0 ? codes_of[static_cast<std::size_t>(frame)].data() : nullptr});
        }
        std::vector<std::int32_t> codes(items.size() * 16);
        REQUIRE(f.gpu->run_frame(items, codes).ok());
        auto dbg = f.gpu->read_debug(static_cast<int>(items.size()));
        REQUIRE(dbg.ok());
        const auto fr = static_cast<std::size_t>(frame);
        worst_hidden = std::max(worst_hidden, test::compare(row(dbg->hidden, 0, h), hidden_of[fr]).rel);
        worst_logits = std::max(worst_logits, test::compare(row(dbg->logits, 0, vocab), logits_of[fr]).rel);
    }
    for (int s = 0; s <= others; ++s) f.gpu->release(s);
    std::printf("attention split over blocks vs one block, %d frames: max rel error hidden %.3g, codec logits %.3g\n",
                frames, worst_hidden, worst_logits);
    CHECK(worst_hidden <= k_tol);
    CHECK(worst_logits <= k_tol);
}

TEST_CASE("the GPU sampler picks what the CPU sampler picks from the same logits", "[gpu]") {
    auto& f = shared();
    const auto& cfg = f.ckpt.config();
    const auto opts = make_generation_options(cfg, {.seed = 1234});
    const int B = 3;
    std::vector<std::vector<std::int32_t>> history(B);
    for (int s = 0; s < B; ++s)
        REQUIRE(f.gpu->set_prompt(s, f.trajectories[static_cast<std::size_t>(s)].plan.rows).ok());
    int checked = 0;
    for (int frame = 0; frame < 8; ++frame) {
        std::vector<frame_item> items;
        for (int s = 0; s < B; ++s) {
            items.push_back({.slot = s, .frame = frame, .seed = 1234u + static_cast<unsigned>(s), .talker = opts.talker,
                             .code_predictor = opts.code_predictor, .repetition_penalty = opts.processors.repetition_penalty,
                             .text_id = cfg.text_ids.tts_pad});
            // The last session with nucleus sampling on (the defaults leave top_p at 1), a narrower
            // top-k and another temperature, so the top-p cut and its sums are compared too.
            if (s == B - 1) {
                for (auto* d : {&items.back().talker, &items.back().code_predictor}) {
                    d->top_p = 0.8f;
                    d->top_k = 20;
                    d->temperature = 0.7f;
                }
            }
        }
        std::vector<std::int32_t> codes(B * 16);
        REQUIRE(f.gpu->run_frame(items, codes).ok());
        auto dbg = f.gpu->read_debug(B);
        REQUIRE(dbg.ok());
        for (int s = 0; s < B; ++s) {
            const auto& it = items[static_cast<std::size_t>(s)];
            std::vector<float> logits(row(dbg->logits, static_cast<std::size_t>(s), 3072).begin(),
                                      row(dbg->logits, static_cast<std::size_t>(s), 3072).end());
            ref::apply_talker_processors(logits, history[static_cast<std::size_t>(s)], opts.processors);
            auto c0 = ref::choose_token(logits, it.talker, sampling_uniform(it.seed, static_cast<std::uint32_t>(frame), 0));
            CHECK(c0 == codes[static_cast<std::size_t>(s) * 16]);
            history[static_cast<std::size_t>(s)].push_back(codes[static_cast<std::size_t>(s) * 16]);
            for (int j = 0; j < 15; ++j) {
                auto l = row(dbg->cp_logits, static_cast<std::size_t>(s) * 15 + static_cast<std::size_t>(j), 2048);
                auto c = ref::choose_token(l, it.code_predictor,
                                           sampling_uniform(it.seed, static_cast<std::uint32_t>(frame), static_cast<std::uint32_t>(j + 1)));
                CHECK(c == codes[static_cast<std::size_t>(s) * 16 + static_cast<std::size_t>(j) + 1]);
            }
            checked += 16;
        }
    }
    for (int s = 0; s < B; ++s) f.gpu->release(s);
    std::printf("sampler agreement: %d sampled tokens compared\n", checked);
}

TEST_CASE("the same frames give bit-identical outputs", "[gpu]") {
    auto& f = shared();
    const auto& cfg = f.ckpt.config();
    const auto opts = make_generation_options(cfg, {.seed = 99});
    constexpr int B = 3, frames = 1000;  // + a ~30-row prompt: within max_positions
    auto run = [&] {
        std::vector<std::int32_t> all;
        std::vector<float> last_logits;
        for (int s = 0; s < B; ++s)
            REQUIRE(f.gpu->set_prompt(s, f.trajectories[static_cast<std::size_t>(s)].plan.rows).ok());
        for (int frame = 0; frame < frames; ++frame) {
            std::vector<frame_item> items;
            for (int s = 0; s < B; ++s) {
                items.push_back({.slot = s, .frame = frame, .seed = 99, .talker = opts.talker,
                                 .code_predictor = opts.code_predictor, .repetition_penalty = 1.05f,
                                 .text_id = cfg.text_ids.tts_pad,
                                 .forced_codes = f.trajectories[0].codes[static_cast<std::size_t>(frame % k_frames)].data()});
            }
            std::vector<std::int32_t> codes(B * 16);
            REQUIRE(f.gpu->run_frame(items, codes).ok());
            auto dbg = f.gpu->read_debug(B);
            REQUIRE(dbg.ok());
            all.insert(all.end(), codes.begin(), codes.end());
            last_logits.insert(last_logits.end(), dbg->logits.begin(), dbg->logits.end());
        }
        for (int s = 0; s < B; ++s) f.gpu->release(s);
        return std::make_pair(all, last_logits);
    };
    auto a = run();
    auto b = run();
    CHECK(a.first == b.first);
    CHECK(a.second == b.second);  // float ==: every bit
    std::printf("determinism: %d frames x %d sessions run twice, logits bit-identical: %s\n", frames, B,
                a.second == b.second ? "yes" : "NO");
}

TEST_CASE("a logged launch names every phase in order, and logging changes no output", "[gpu]") {
    auto& f = shared();
    const auto& cfg = f.ckpt.config();
    const auto opts = make_generation_options(cfg, {.seed = 3});
    constexpr int B = 2;
    auto frame = [&](bool logged) {
        for (int s = 0; s < B; ++s)
            REQUIRE(f.gpu->set_prompt(s, f.trajectories[static_cast<std::size_t>(s)].plan.rows).ok());
        std::vector<frame_item> items;
        for (int s = 0; s < B; ++s)
            items.push_back({.slot = s, .frame = 0, .seed = 3, .talker = opts.talker,
                             .code_predictor = opts.code_predictor, .repetition_penalty = 1.05f,
                             .text_id = cfg.text_ids.tts_pad});
        // Two launches: the prompts, then one row per session (the steady-state layout).
        std::vector<std::int32_t> codes(B * 16);
        REQUIRE(f.gpu->run_frame(items, codes).ok());
        for (auto& it : items) it.frame = 1;
        REQUIRE(f.gpu->log_phases(logged).ok());
        REQUIRE(f.gpu->run_frame(items, codes).ok());
        REQUIRE(f.gpu->log_phases(false).ok());
        for (int s = 0; s < B; ++s) f.gpu->release(s);
        return codes;
    };
    const auto plain = frame(false);
    const auto logged = frame(true);
    CHECK(plain == logged);
    auto spans = f.gpu->read_phases();
    REQUIRE(spans.ok());
    // One row per session: per talker layer qkv, attention, o, gate/up, down; the code
    // predictor's first pass has two rows per session, so its layers store keys first.
    // Without a projection (0.6B) only pass 0 has an input phase: each later pass's rows are
    // written by the sampling before it.
    const auto& t = cfg.talker.body;
    const auto& c = cfg.code_predictor.body;
    const int steps = cfg.code_predictor.steps();
    const int input_phases = cfg.code_predictor.has_projection ? steps : 1;
    const std::size_t expected = 1 + 5 * static_cast<std::size_t>(t.layers) + 2 +
                                 static_cast<std::size_t>(steps) * (5 * c.layers + 2) + input_phases + c.layers + 2;
    REQUIRE(spans->size() == expected);
    CHECK(spans->front().kind == phase_kind::inputs);
    CHECK((*spans)[1].kind == phase_kind::talker_qkv);
    CHECK((*spans)[2].kind == phase_kind::talker_attention);
    CHECK(spans->back().kind == phase_kind::publish);
    std::map<phase_kind, int> count;
    double total = 0;
    for (const auto& sp : *spans) {
        ++count[sp.kind];
        CHECK(sp.us > 0);
        total += sp.us;
    }
    CHECK(count[phase_kind::talker_down] == t.layers);
    CHECK(count[phase_kind::cp_down] == steps * c.layers);
    CHECK(count[phase_kind::cp_kv] == c.layers);
    CHECK(count[phase_kind::cp_sample] == steps);
    CHECK(count[phase_kind::cp_input] == input_phases);
    CHECK(total > 100);  // a frame of the 0.6B model takes milliseconds
    CHECK(total < 1e6);  // and not a second
    std::printf("phase log: %zu phases, %.0f us\n", spans->size(), total);
}

namespace {

// B sessions, session s joining at frame s / per_frame with the first `prompt_rows` rows of its
// prompt (all of them when 0), sampled, for `frames` launches: codes in range.
void run_short_generation(int B, int frames, int per_frame = 1, int prompt_rows = 0) {
    auto& f = shared();
    const auto& cfg = f.ckpt.config();
    const auto opts = make_generation_options(cfg, {.seed = 5});
    const int codec_vocab = cfg.talker.codec_vocab, cp_vocab = cfg.code_predictor.vocab;
    int emitted = 0;
    for (int frame = 0; frame < frames; ++frame) {
        std::vector<frame_item> items;
        for (int s = 0; s < B && s / per_frame <= frame; ++s) {
            const auto& t = f.trajectories[static_cast<std::size_t>(s % 3)];
            const int joined = s / per_frame;
            std::span<const prompt_row> prompt(t.plan.rows);
            if (prompt_rows > 0) {
                REQUIRE(prompt_rows <= std::ssize(prompt));
                prompt = prompt.first(static_cast<std::size_t>(prompt_rows));
            }
            if (joined == frame) REQUIRE(f.gpu->set_prompt(s, prompt).ok());
            items.push_back({.slot = s, .frame = frame - joined, .seed = 5, .talker = opts.talker,
                             .code_predictor = opts.code_predictor, .repetition_penalty = 1.05f,
                             .text_id = t.plan.text_track(frame - joined)});
        }
        std::vector<std::int32_t> codes(items.size() * 16);
        REQUIRE(f.gpu->run_frame(items, codes).ok());
        for (std::size_t i = 0; i < items.size(); ++i) {
            CHECK(codes[i * 16] >= 0);
            CHECK(codes[i * 16] < codec_vocab);
            if (codes[i * 16] == megakernel_policy_from(cfg).eos) continue;
            for (int g = 1; g < 16; ++g) {
                CHECK(codes[i * 16 + static_cast<std::size_t>(g)] >= 0);
                CHECK(codes[i * 16 + static_cast<std::size_t>(g)] < cp_vocab);
            }
            ++emitted;
        }
    }
    for (int s = 0; s < B; ++s) f.gpu->release(s);
    std::printf("short batched generation: %d session-frames emitted\n", emitted);
}

}  // namespace

// Then 10 sessions on two-row prompts: past 132 / 16 rows the attention's (row, head) pairs no
// longer fit one a block, and teams of 4 or 2 warps walk them (the talker at 10 rows, the code
// predictor's first pass, two rows a session, at 20): paths the first batch never takes. Then
// 16 sessions joining at once on nine-row prompts (the streaming prompt's length): a launch of
// 144 talker rows, more than one prompt's 128 (a launch takes 256).
TEST_CASE("a short batched sampled generation, sessions joining mid-batch", "[gpu][sanitize]") {
    run_short_generation(4, 6);
    run_short_generation(10, 3, 10, 2);
    run_short_generation(16, 2, 16, 9);
}

// racecheck instruments every shared-memory access (about 1000x slower): two launches of up to 2
// sessions, then two of 10 (short prompts: a launch's cost grows with its rows).
TEST_CASE("the shortest batched generation, for racecheck", "[gpu][racecheck]") {
    run_short_generation(2, 2);
    run_short_generation(10, 2, 10, 2);
}

// gpu suite: the CUDA vocoder (kernels/vocoder/cuda_vocoder.h) against the fp32 CPU
// reference (kernels/reference/vocoder/vocoder_stream.h), on random codes.
//
// Two models: the tiny fixture (tests/fixtures/tiny-cv06, or MEGATTS_FIXTURE_DIR's: a
// 4-frame window, a few channels per stage, widths that are not multiples of 4) and
// the full size (MEGATTS_GPU_MODEL names a make-checkpoint directory; else the test
// writes /tmp/megatts-gpu-0.6b once). Checked: every frame's audio within 1e-3 of the
// reference's peak, decoded frame by frame, against the reference decoding the same
// frames one at a time and all at once; sessions at different positions in one batch
// give what each gives alone; a released and readmitted slot starts clean; direct
// launches without programmatic launch give the graphs' samples bit for bit; the
// frame-rate transformer as one persistent launch gives what a launch per product
// gives; bad calls are refused by name. At full size the decoder blocks' 7-tap convs run
// as implicit GEMMs (conv_implicit.cuh) wherever their tiles have 64 rows or more (some
// blocks at B = 1, every block at B = 64), so both kernels' paths are checked against the
// reference. On sm_90a those 7-tap convs multiply TF32 operands by default
// (cuda_vocoder_limits::tf32_convs): the comparisons with the reference hold them to 1e-3
// too; the comparisons of one decoding with another (batch against alone, the frame stack
// against launches) run them as bf16x3, where only the order of sums differs and 2e-4 holds,
// and the batch case once more with TF32 at the reference's bound (a TF32 rounding may go
// either way on the last bits of an activation). Each comparison prints its worst error, and the first
// session's run prints the worst error of every intermediate the GPU keeps, so one
// run's output says where a failure starts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cuda/launch_timer.h"
#include "kernels/reference/vocoder/snake_beta.h"
#include "kernels/reference/vocoder/vocoder_stream.h"
#include "kernels/vocoder/cuda_vocoder.h"
#include "kernels/vocoder/gemm_shape.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/vocoder_loader.h"
#include "tests/support/gpu_model.h"
#include "tests/support/vocoder_inputs.h"

using namespace megatts;

namespace {

constexpr double k_tol = 1e-3;        // the audio against the reference
// The same session decoded in different batches: how K is split across blocks depends on the
// batch size, so sums are added in another order, and calls of up to 4 sessions (the default) run the
// frame-rate transformer as f32 FMAs (the frame stack), larger ones on the tensor cores (bf16x3:
// 6.3e-5 on the tiny model with 9 sessions, 4.7e-5 at full size with 64 over 80 frames, H100,
// 2026-11-26).
constexpr double k_same_tol = 2e-4;

using stage_key = std::pair<ref::vocoder_stage, int>;

// Every intermediate read_stage() offers.
const std::vector<stage_key> k_stages = {
    {ref::vocoder_stage::dequant, 0},  {ref::vocoder_stage::pre_conv, 0}, {ref::vocoder_stage::pre_transformer, 0},
    {ref::vocoder_stage::upsample, 0}, {ref::vocoder_stage::upsample, 1}, {ref::vocoder_stage::decoder0, 0},
    {ref::vocoder_stage::block, 1},    {ref::vocoder_stage::block, 2},    {ref::vocoder_stage::block, 3},
    {ref::vocoder_stage::block, 4},    {ref::vocoder_stage::audio, 0},
};

// The reference's decoding of one random utterance, frame by frame.
struct trajectory {
    std::vector<std::int32_t> codes;  // [frames][quantizers]
    std::vector<std::vector<float>> audio;
    std::vector<std::map<stage_key, std::vector<float>>> stages;  // per frame, when recorded
    std::vector<float> whole;  // the same frames decoded in one call (trajectory 0)

    std::span<const std::int32_t> frame_codes(int frame, int quantizers) const {
        return std::span(codes).subspan(static_cast<std::size_t>(frame) * quantizers, static_cast<std::size_t>(quantizers));
    }
};

// The decodings run on worker threads, where Catch2 assertions are not allowed: a
// failure is thrown and reaches the test through the future.
std::vector<float> decoded(result<std::vector<float>> pcm) {
    if (!pcm) throw std::runtime_error("reference vocoder: " + pcm.err().message);
    return std::move(pcm.value());
}

trajectory decode_reference(const ref::vocoder_weights& w, unsigned seed, int frames, bool record) {
    const int nq = w.dims.num_quantizers;
    trajectory t;
    t.codes = test::random_codes(w.dims, seed, frames);
    ref::vocoder_stream s(w);
    if (record)
        s.set_observer([&t](const ref::vocoder_stage_output& o) {
            auto& v = t.stages.back()[{o.stage, o.index}];
            v.assign(o.values.begin(), o.values.end());
        });
    for (int f = 0; f < frames; ++f) {
        if (record) t.stages.emplace_back();
        t.audio.push_back(decoded(s.decode(t.frame_codes(f, nq), 1)));
    }
    return t;
}

// The same utterance decoded in one call.
std::vector<float> decode_whole(const ref::vocoder_weights& w, unsigned seed, int frames) {
    ref::vocoder_stream s(w);
    return decoded(s.decode(test::random_codes(w.dims, seed, frames), frames));
}

struct model {
    std::string name;
    ref::vocoder_weights weights;
    int frames = 0;
    std::vector<trajectory> trajectories;  // 0: stages recorded and decoded whole as well
};

model make_model(const std::string& name, const std::string& dir, int frames, int count) {
    auto c = checkpoint::open(dir);
    INFO((c ? "" : c.err().message));
    REQUIRE(c.ok());
    auto w = load_vocoder_weights(*c);
    REQUIRE(w.ok());
    model m{name, std::move(w.value()), frames, {}};
    // The reference is single-threaded and slow at full size: one thread per decoding.
    std::vector<std::future<trajectory>> jobs;
    for (int i = 0; i < count; ++i)
        jobs.push_back(std::async(std::launch::async, decode_reference, std::cref(m.weights), 1000u + i, frames, i == 0));
    auto whole = std::async(std::launch::async, decode_whole, std::cref(m.weights), 1000u, frames);
    for (auto& j : jobs) m.trajectories.push_back(j.get());
    m.trajectories[0].whole = whole.get();
    return m;
}

// The GPU machine runs a copy of the tree at another path: bench/gpu-run says where.
std::string fixture_dir() {
    if (const char* env = std::getenv("MEGATTS_FIXTURE_DIR")) return env;
    return MEGATTS_FIXTURE_DIR;
}

model& tiny() {
    static model m = make_model("tiny", fixture_dir() + "/tiny-cv06", 40, 3);
    return m;
}

model& full() {
    static model m = make_model("full size", test::gpu_model_dir(), 80, 3);
    return m;
}

std::unique_ptr<cuda_vocoder> make_gpu(const model& m, cuda_vocoder_limits limits = {}) {
    auto v = cuda_vocoder::create(m.weights, limits);
    INFO((v ? "" : v.err().message));
    REQUIRE(v.ok());
    return std::move(v.value());
}

// The worst absolute error and the largest reference value, over many comparisons.
struct error_meter {
    double worst = 0, peak = 0;

    void add(std::span<const float> x, std::span<const float> ref) {
        REQUIRE(x.size() == ref.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            peak = std::max(peak, static_cast<double>(std::abs(ref[i])));
            const double e = std::abs(static_cast<double>(x[i]) - ref[i]);
            worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
    }
    double rel() const { return peak > 0 ? worst / peak : worst; }
};

// One session of a run: which utterance, in which slot, from which call on.
struct session {
    int slot;
    int trajectory;
    int start;
    std::vector<std::vector<float>> audio;  // per frame
};

// Runs the sessions together, each adding one frame per call from its start call,
// until each has decoded `frames` frames. With `stages`, session 0's intermediates
// are compared with its trajectory's after every frame.
void run_sessions(cuda_vocoder& gpu, const model& m, std::vector<session>& sessions, int frames,
                  std::map<stage_key, error_meter>* stages = nullptr) {
    const int nq = m.weights.dims.num_quantizers, spf = gpu.samples_per_frame();
    for (auto& s : sessions) REQUIRE(gpu.admit(s.slot).ok());
    for (int call = 0;; ++call) {
        std::vector<vocoder_frame> items;
        std::vector<session*> active;
        for (auto& s : sessions) {
            const int f = static_cast<int>(s.audio.size());
            if (call < s.start || f >= frames) continue;
            items.push_back({s.slot, m.trajectories[static_cast<std::size_t>(s.trajectory)].frame_codes(f, nq)});
            active.push_back(&s);
        }
        if (items.empty()) {
            if (std::all_of(sessions.begin(), sessions.end(), [&](const session& s) { return static_cast<int>(s.audio.size()) >= frames; }))
                break;
            continue;
        }
        std::vector<float> pcm(items.size() * static_cast<std::size_t>(spf));
        auto ran = gpu.vocode(items, pcm);
        INFO((ran ? "" : ran.err().message));
        REQUIRE(ran.ok());
        for (std::size_t i = 0; i < active.size(); ++i) {
            if (stages && active[i] == &sessions.front()) {
                const auto& t = m.trajectories[static_cast<std::size_t>(active[i]->trajectory)];
                const auto& want = t.stages[active[i]->audio.size()];
                for (const auto& key : k_stages) {
                    auto got = gpu.read_stage(key.first, key.second, static_cast<int>(i));
                    REQUIRE(got.ok());
                    std::vector<float> ref = want.at(key);
                    // The GPU keeps these after the SnakeBeta of the stage that reads them.
                    if (key.first == ref::vocoder_stage::decoder0)
                        ref::snake_beta(m.weights.blocks[0].snake, ref);
                    else if (key.first == ref::vocoder_stage::block)
                        ref::snake_beta(key.second < 4 ? m.weights.blocks[static_cast<std::size_t>(key.second)].snake
                                                       : m.weights.final_snake,
                                        ref);
                    (*stages)[key].add(*got, ref);
                }
            }
            active[i]->audio.emplace_back(pcm.begin() + static_cast<long>(i) * spf,
                                          pcm.begin() + static_cast<long>(i + 1) * spf);
        }
    }
    for (auto& s : sessions) gpu.release(s.slot);
}

double audio_error(const session& s, const trajectory& t) {
    error_meter e;
    for (std::size_t f = 0; f < s.audio.size(); ++f) e.add(s.audio[f], t.audio[f]);
    return e.rel();
}

double same_error(const session& a, const session& b) {
    error_meter e;
    for (std::size_t f = 0; f < a.audio.size(); ++f) e.add(a.audio[f], b.audio[f]);
    return e.rel();
}

// The same sessions through two vocoders: the largest difference between their samples.
double difference(cuda_vocoder& x, cuda_vocoder& y, const model& m, const std::vector<session>& sessions) {
    std::vector<session> a = sessions, b = sessions;
    run_sessions(x, m, a, m.frames);
    run_sessions(y, m, b, m.frames);
    double diff = 0;
    for (std::size_t s = 0; s < a.size(); ++s) diff = std::max(diff, same_error(a[s], b[s]));
    return diff;
}

void check_frame_by_frame(model& m) {
    auto gpu = make_gpu(m);
    std::vector<session> one{{.slot = 0, .trajectory = 0, .start = 0, .audio = {}}};
    std::map<stage_key, error_meter> stages;
    run_sessions(*gpu, m, one, m.frames, &stages);
    std::printf("%s, %d frames, B = 1: max error relative to the reference's peak, by stage:\n", m.name.c_str(),
                m.frames);
    for (const auto& key : k_stages) {
        const auto& e = stages[key];
        std::printf("  %-18s %.3g  (peak %.3g)\n", ref::vocoder_stage_name(key.first, key.second).c_str(), e.rel(),
                    e.peak);
    }
    const double audio = audio_error(one[0], m.trajectories[0]);
    std::printf("  audio vs the reference decoding frame by frame: %.3g\n", audio);
    CHECK(audio <= k_tol);

    std::vector<float> streamed;
    for (const auto& f : one[0].audio) streamed.insert(streamed.end(), f.begin(), f.end());
    error_meter whole;
    whole.add(streamed, m.trajectories[0].whole);
    std::printf("  audio vs the reference decoding all %d frames in one call: %.3g\n", m.frames, whole.rel());
    CHECK(whole.rel() <= k_tol);
}

// Sessions of the model's utterances joining at different calls, against each alone: within
// `same_tol` of it, and within k_tol of the reference.
void check_batch_against_alone(model& m, int count, int stagger, const cuda_vocoder_limits& limits = {},
                               double same_tol = k_same_tol) {
    auto gpu = make_gpu(m, limits);
    const int n = static_cast<int>(m.trajectories.size());
    std::vector<session> alone;
    for (int t = 0; t < n; ++t) {
        std::vector<session> one{{.slot = t, .trajectory = t, .start = 0, .audio = {}}};
        run_sessions(*gpu, m, one, m.frames);
        alone.push_back(std::move(one[0]));
    }
    std::vector<session> batch;
    for (int s = 0; s < count; ++s) batch.push_back({.slot = s, .trajectory = s % n, .start = (s * stagger) % 17, .audio = {}});
    run_sessions(*gpu, m, batch, m.frames);
    double worst_ref = 0, worst_same = 0;
    for (const auto& s : batch) {
        worst_ref = std::max(worst_ref, audio_error(s, m.trajectories[static_cast<std::size_t>(s.trajectory)]));
        worst_same = std::max(worst_same, same_error(s, alone[static_cast<std::size_t>(s.trajectory)]));
    }
    std::printf("%s%s, %d sessions joining at calls 0..16, %d frames each: audio vs the reference %.3g, "
                "vs the same utterance decoded alone %.3g\n",
                m.name.c_str(), limits.tf32_convs ? "" : " (bf16x3 7-tap convs)", count, m.frames, worst_ref,
                worst_same);
    CHECK(worst_ref <= k_tol);
    CHECK(worst_same <= same_tol);
}

}  // namespace

TEST_CASE("tiny: frame by frame equals the reference, streamed and whole", "[gpu]") { check_frame_by_frame(tiny()); }

TEST_CASE("tiny: sessions at different positions in one batch equal each alone", "[gpu]") {
    check_batch_against_alone(tiny(), 9, 2);
}

TEST_CASE("tiny: a released and readmitted slot starts clean", "[gpu]") {
    auto& m = tiny();
    auto gpu = make_gpu(m);
    std::vector<session> fresh{{.slot = 1, .trajectory = 2, .start = 0, .audio = {}}};
    run_sessions(*gpu, m, fresh, m.frames);
    // Slot 0 first carries another utterance far enough to fill every ring.
    std::vector<session> before{{.slot = 0, .trajectory = 1, .start = 0, .audio = {}}};
    run_sessions(*gpu, m, before, m.frames / 2);
    std::vector<session> reused{{.slot = 0, .trajectory = 2, .start = 0, .audio = {}}};
    run_sessions(*gpu, m, reused, m.frames);
    const double diff = same_error(reused[0], fresh[0]);
    std::printf("tiny: readmitted slot vs a fresh slot, same utterance: %.3g (same program: expect 0)\n", diff);
    CHECK(diff == 0.0);
}

TEST_CASE("tiny: direct launches without PDL give the graphs' samples", "[gpu]") {
    auto& m = tiny();
    auto graphs = make_gpu(m);
    auto direct = make_gpu(m, {.graphs = false, .programmatic_launch = false});
    const double diff = difference(*graphs, *direct, m,
                                   {{.slot = 0, .trajectory = 0, .start = 0, .audio = {}},
                                    {.slot = 1, .trajectory = 1, .start = 3, .audio = {}}});
    std::printf("tiny: graphs with PDL vs direct launches without: %.3g (expect 0)\n", diff);
    CHECK(diff == 0.0);
}

// The frame-rate transformer as one persistent launch (here for calls of up to 16 items, its
// largest; the default stops at 4) against a
// launch per product and attention: f32 FMAs against f32-accurate tensor-core products,
// each sum in its own order.
void check_stack_against_ops(model& m, bool required) {
    auto stack = make_gpu(m, {.frame_stack_items = cuda_vocoder_limits::max_frame_stack_items, .tf32_convs = false});
    auto ops = make_gpu(m, {.frame_stack_items = 0, .tf32_convs = false});
    std::printf("%s: the frame stack runs calls of 1 / 4 / 16 items: %d / %d / %d\n", m.name.c_str(),
                stack->frame_stack_for(1), stack->frame_stack_for(4), stack->frame_stack_for(16));
    if (required) REQUIRE(stack->frame_stack_for(1));
    CHECK_FALSE(ops->frame_stack_for(1));
    std::vector<session> a{{.slot = 0, .trajectory = 0, .start = 0, .audio = {}},
                           {.slot = 1, .trajectory = 1, .start = 3, .audio = {}},
                           {.slot = 2, .trajectory = 2, .start = 5, .audio = {}}};
    std::vector<session> b = a;
    run_sessions(*stack, m, a, m.frames);
    run_sessions(*ops, m, b, m.frames);
    double diff = 0, ref = 0;
    for (std::size_t s = 0; s < a.size(); ++s) {
        diff = std::max(diff, same_error(a[s], b[s]));
        ref = std::max(ref, audio_error(a[s], m.trajectories[static_cast<std::size_t>(a[s].trajectory)]));
    }
    std::printf("%s: frame stack vs a launch per product, 3 sessions from calls 0, 3, 5: %.3g; vs the reference "
                "%.3g\n", m.name.c_str(), diff, ref);
    CHECK(diff <= k_same_tol);
    CHECK(ref <= k_tol);
}

TEST_CASE("tiny: the frame stack gives what a launch per product gives", "[gpu]") {
    check_stack_against_ops(tiny(), false);
}

TEST_CASE("tiny: bad calls are refused by name and change nothing", "[gpu]") {
    auto& m = tiny();
    auto gpu = make_gpu(m, {.slots = 4, .max_batch = 2});
    const int nq = m.weights.dims.num_quantizers, spf = gpu->samples_per_frame();
    const auto codes = m.trajectories[0].frame_codes(0, nq);
    std::vector<float> pcm(3 * static_cast<std::size_t>(spf));
    auto refused = [&](std::vector<vocoder_frame> items, std::size_t room, const char* what) {
        auto r = gpu->vocode(items, std::span(pcm).first(room));
        INFO(what);
        REQUIRE_FALSE(r.ok());
        CHECK(r.err().kind == error_kind::invalid_input);
        std::printf("  refused (%s): %s\n", what, r.err().message.c_str());
    };
    REQUIRE(gpu->admit(0).ok());
    REQUIRE(gpu->admit(1).ok());
    CHECK_FALSE(gpu->admit(1).ok());
    CHECK_FALSE(gpu->admit(4).ok());
    std::vector<std::int32_t> out_of_range(codes.begin(), codes.end());
    out_of_range[3] = m.weights.dims.codebook_size;
    refused({}, pcm.size(), "no items");
    refused({{0, codes}, {1, codes}, {2, codes}}, pcm.size(), "more items than max_batch");
    refused({{2, codes}}, pcm.size(), "a slot not admitted");
    refused({{7, codes}}, pcm.size(), "a slot that does not exist");
    refused({{0, codes}, {0, codes}}, pcm.size(), "a slot twice");
    refused({{0, out_of_range}}, pcm.size(), "a code out of range");
    refused({{0, codes.first(static_cast<std::size_t>(nq - 1))}}, pcm.size(), "too few codes");
    refused({{0, codes}}, static_cast<std::size_t>(spf - 1), "pcm too small");
    CHECK(gpu->frames_decoded(0) == 0);
    std::vector<vocoder_frame> good{{0, codes}};
    REQUIRE(gpu->vocode(good, pcm).ok());
    CHECK(gpu->frames_decoded(0) == 1);
    CHECK_FALSE(gpu->read_stage(ref::vocoder_stage::pt_layer, 0, 0).ok());
    // The call in halves: collect() only after a launch(), one launch() at a time.
    auto no_launch = gpu->collect(pcm);
    REQUIRE_FALSE(no_launch.ok());
    CHECK(no_launch.err().kind == error_kind::invalid_input);
    REQUIRE(gpu->launch(good).ok());
    CHECK(gpu->frames_decoded(0) == 2);
    auto twice = gpu->launch(good);
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.err().kind == error_kind::invalid_input);
    CHECK_FALSE(gpu->collect(std::span(pcm).first(static_cast<std::size_t>(spf - 1))).ok());
    REQUIRE(gpu->collect(pcm).ok());
    CHECK(gpu->frames_decoded(0) == 2);
    CHECK_FALSE(gpu->failed());
}

TEST_CASE("tiny: a launch() and its collect() give what vocode() gives, across admit() and release()", "[gpu]") {
    auto& m = tiny();
    auto halves = make_gpu(m, {.slots = 2, .max_batch = 2});
    auto whole = make_gpu(m, {.slots = 2, .max_batch = 2});
    const int nq = m.weights.dims.num_quantizers;
    const auto spf = static_cast<std::size_t>(halves->samples_per_frame());
    for (auto* gpu : {halves.get(), whole.get()}) {
        REQUIRE(gpu->admit(0).ok());
        REQUIRE(gpu->admit(1).ok());
    }
    std::vector<float> a(2 * spf), b(2 * spf);
    bool same = true;
    for (int f = 0; f < 6; ++f) {
        const auto codes = m.trajectories[0].frame_codes(f, nq);
        const std::vector<vocoder_frame> both{{0, codes}, {1, codes}};
        REQUIRE(halves->launch(both).ok());
        // While the frame is computed slot 1 is let go and taken again (the engine's admission
        // overlaps the vocoder): its next frame is a new session's first, this one unaffected.
        halves->release(1);
        REQUIRE(halves->admit(1).ok());
        REQUIRE(halves->collect(a).ok());
        REQUIRE(whole->vocode(both, b).ok());
        whole->release(1);
        REQUIRE(whole->admit(1).ok());
        same = same && a == b;
        CHECK(halves->frames_decoded(0) == f + 1);
        CHECK(halves->frames_decoded(1) == 0);
    }
    CHECK(same);  // the same items, slots and frames: bit for bit
}

TEST_CASE("tiny: weights the kernels cannot run are refused by name", "[gpu]") {
    // A residual conv with more taps than a product block tabulates sources for.
    ref::vocoder_weights w = tiny().weights;
    auto& conv = w.blocks[0].units[0].conv1;
    conv.taps = voc::k_max_gemm_taps + 1;
    conv.weight.assign(static_cast<std::size_t>(conv.taps) * conv.in * conv.out, 0.01f);
    auto r = cuda_vocoder::create(w, {.slots = 2, .max_batch = 2});
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::invalid_input);
    CHECK(r.err().message.find("taps") != std::string::npos);
    std::printf("  refused: %s\n", r.err().message.c_str());

    // A layer marked for rounded operands (a precision study's model, not the published one).
    ref::vocoder_weights studied = tiny().weights;
    studied.blocks[1].units[2].conv2.operand_bits = 11;
    auto s = cuda_vocoder::create(studied, {.slots = 2, .max_batch = 2});
    REQUIRE_FALSE(s.ok());
    CHECK(s.err().kind == error_kind::invalid_input);
    CHECK(s.err().message.find("decoder.2.units.2.conv2") != std::string::npos);
    std::printf("  refused: %s\n", s.err().message.c_str());
}

TEST_CASE("tiny: a timed call's device span lies inside the call, and timing changes no sample", "[gpu]") {
    auto& m = tiny();
    auto timed = make_gpu(m);
    auto plain = make_gpu(m);
    auto timer = launch_timer::create();
    REQUIRE(timer.ok());
    timed->time_calls(timer->get());
    REQUIRE(timed->admit(0).ok());
    REQUIRE(plain->admit(0).ok());
    const int nq = m.weights.dims.num_quantizers;
    std::vector<float> a(static_cast<std::size_t>(timed->samples_per_frame())), b(a.size());
    for (int f = 0; f < 4; ++f) {
        const auto codes = m.trajectories[0].frame_codes(f, nq);
        const auto before = std::chrono::steady_clock::now();
        REQUIRE(timed->vocode(std::vector<vocoder_frame>{{0, codes}}, a).ok());
        const auto after = std::chrono::steady_clock::now();
        REQUIRE(plain->vocode(std::vector<vocoder_frame>{{0, codes}}, b).ok());
        CHECK(a == b);
        const auto span = (*timer)->read();
        REQUIRE(span);
        // The mapping onto the host clock is good to a few microseconds (launch_timer.h).
        CHECK(span->begin >= before - std::chrono::microseconds(50));
        CHECK(span->end <= after + std::chrono::microseconds(50));
        CHECK(span->end > span->begin);
        CHECK_FALSE((*timer)->read());  // a pair is read once
    }
}

TEST_CASE("full size: frame by frame equals the reference, streamed and whole", "[gpu]") {
    check_frame_by_frame(full());
}

TEST_CASE("full size: the frame stack gives what a launch per product gives", "[gpu]") {
    check_stack_against_ops(full(), true);
}

// Split K's partial tiles added within clusters against through global memory: the same
// additions in the same order (split 0 first), so the same bits. At full size a call of one
// item splits K in most of its products, and the H200 and H100 hold their clusters.
TEST_CASE("full size: split K within clusters gives the workspace's samples", "[gpu]") {
    auto& m = full();
    auto clusters = make_gpu(m);
    auto workspace = make_gpu(m, {.cluster_sum = false});
    std::printf("full size: products summing split K within clusters, calls of 1 / 4 / 64 items: %d / %d / %d\n",
                clusters->cluster_sums_for(1), clusters->cluster_sums_for(4), clusters->cluster_sums_for(64));
    REQUIRE(clusters->cluster_sums_for(1) > 0);
    CHECK(workspace->cluster_sums_for(1) == 0);
    const double diff = difference(*clusters, *workspace, m,
                                   {{.slot = 0, .trajectory = 0, .start = 0, .audio = {}},
                                    {.slot = 1, .trajectory = 1, .start = 2, .audio = {}}});
    std::printf("full size: split K within clusters vs through global memory: %.3g (expect 0)\n", diff);
    CHECK(diff == 0.0);
}

TEST_CASE("full size: 64 sessions at different positions equal each alone", "[gpu]") {
    check_batch_against_alone(full(), 64, 1, {.tf32_convs = false});
}

TEST_CASE("full size: 128 sessions, the most a call takes, equal each alone", "[gpu]") {
    constexpr int n = cuda_vocoder_limits::max_items;
    check_batch_against_alone(full(), n, 1, {.slots = n, .max_batch = n, .tf32_convs = false});
}

TEST_CASE("full size: 64 sessions with TF32 7-tap convs stay within the reference's bound", "[gpu]") {
    check_batch_against_alone(full(), 64, 1, {}, k_tol);
}

#include "daemon/command_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/bench_record.h"
#include "daemon/cli_exit.h"
#include "daemon/command_bench_latency.h"
#include "daemon/command_bench_load.h"
#include "daemon/command_bench_vocoder.h"
#include "daemon/default_model.h"
#include "kernels/cuda/copy_bandwidth.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/megakernel/megakernel.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/megakernel_loader.h"
#include "pipeline/model/prompt_layout.h"
#include "pipeline/text/bpe_tokenizer.h"
#include "pipeline/text/tts_prompt_ids.h"

namespace megatts {
namespace {

struct bench_options {
    std::string model = default_model_dir();
    std::vector<int> batches{1, 4, 16, 64};
    int frames = 100;
    int warmup = 10;
    bool phases = false;
    std::string json_out;
};

struct batch_timing {
    double talker_ms = 0, frame_ms = 0;
    // A session's talker KV positions a timed launch touches (those its attention reads and the
    // one it appends), averaged over the timed launches of each kind: the cache grows a position
    // a launch, so at B = 64 its reads rival the weights.
    double talker_positions = 0, frame_positions = 0;
    std::vector<phase_span> phases;  // one logged frame (--phases)
};

// Per phase kind, over one logged frame: how many phases, their total and mean time, and
// the mean of the slowest block's work (the rest of the mean: barrier and skew).
nlohmann::json report_phases(int B, const std::vector<phase_span>& spans) {
    std::vector<int> count(static_cast<std::size_t>(phase_kind::count), 0);
    std::vector<double> total(count.size(), 0.0), work(count.size(), 0.0);
    double all = 0, all_work = 0;
    for (const auto& s : spans) {
        const auto k = static_cast<std::size_t>(s.kind);
        ++count[k];
        total[k] += s.us;
        work[k] += s.work_us;
        all += s.us;
        all_work += s.work_us;
    }
    std::printf("  phases of one frame at B=%d: %zu phases, %.1f us, of which the slowest block worked %.1f us\n", B,
                spans.size(), all, all_work);
    std::printf("  %-20s %6s %10s %9s %9s %9s %7s\n", "phase", "count", "total us", "mean us", "work us", "rest us",
                "share");
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t k = 0; k < count.size(); ++k) {
        if (count[k] == 0) continue;
        const char* name = phase_name(static_cast<phase_kind>(k));
        std::printf("  %-20s %6d %10.1f %9.2f %9.2f %9.2f %6.1f%%\n", name, count[k], total[k], total[k] / count[k],
                    work[k] / count[k], (total[k] - work[k]) / count[k], 100 * total[k] / all);
        rows.push_back({{"phase", name}, {"count", count[k]}, {"total_us", total[k]}, {"work_us", work[k]}});
    }
    return rows;
}

// Weight bytes one decoder layer streams (bf16).
double layer_bytes(const transformer_dims& d) {
    const double h = d.hidden;
    return 2.0 * (h * (d.q_width() + 2.0 * d.kv_width()) + h * d.q_width() + 3.0 * h * d.intermediate + 2.0 * h +
                  2.0 * d.head_dim);
}

struct step_bytes {
    double talker;  // 28 layers + final norm + codec head
    double frame;   // talker + 15 code-predictor passes (5 layers + one head each)
    // Talker KV bytes per session and cached position (keys and values of every layer, bf16):
    // a step reads each session's whole cache from HBM (64 sessions at 250 positions: 1.8 GB,
    // past the L2). The code predictor's cache is not counted: it is written and read within the
    // frame (16 positions, 21 MB at 64 sessions), from the L2.
    double kv_per_position;
};

step_bytes count_bytes(const model_config& c) {
    const auto& t = c.talker;
    const auto& p = c.code_predictor;
    step_bytes b{};
    b.talker = t.body.layers * layer_bytes(t.body) + 2.0 * t.codec_vocab * t.body.hidden + 2.0 * t.body.hidden;
    double pass = p.body.layers * layer_bytes(p.body) + 2.0 * p.vocab * p.body.hidden + 2.0 * p.body.hidden;
    if (p.has_projection) pass += 2.0 * p.body.hidden * (p.embed_width + 1.0);
    b.frame = b.talker + p.steps() * pass;
    b.kv_per_position = 2.0 * 2.0 * t.body.layers * t.body.kv_width();
    return b;
}

// Admits B sessions (prompts in launches of at most 4 so rows stay <= 128), then
// times decode frames of all B together. A session's launch at frame f (1 after its admission)
// has its row at position prompt + f - 1: it reads that many cached positions and appends one.
result<batch_timing> time_batch(megakernel& gpu, const prompt_plan& plan, const model_config& cfg, int B,
                                int frames, int warmup, bool phases) {
    const auto opts = make_generation_options(cfg, {.seed = 1});
    std::vector<frame_item> all;
    for (int s = 0; s < B; ++s)
        all.push_back({.slot = s, .frame = 0, .seed = static_cast<std::uint64_t>(s + 1), .talker = opts.talker,
                       .code_predictor = opts.code_predictor, .repetition_penalty = opts.processors.repetition_penalty,
                       .text_id = cfg.text_ids.tts_pad});
    std::vector<std::int32_t> codes(static_cast<std::size_t>(B) * 16);
    for (int s = 0; s < B; s += 4) {
        std::vector<frame_item> batch;
        for (int i = s; i < std::min(B, s + 4); ++i) {
            MEGATTS_TRY(gpu.set_prompt(i, plan.rows));
            batch.push_back(all[static_cast<std::size_t>(i)]);
        }
        MEGATTS_TRY(gpu.run_frame(batch, codes));
        for (int i = s; i < std::min(B, s + 4); ++i) all[static_cast<std::size_t>(i)].frame = 1;
    }
    const double prompt = static_cast<double>(plan.rows.size());
    auto timed = [&](bool talker_only, double& positions) -> result<double> {
        std::vector<double> ms;
        positions = 0;
        for (int f = 0; f < warmup + frames; ++f) {
            auto t0 = std::chrono::steady_clock::now();
            MEGATTS_TRY(gpu.run_frame(all, codes, talker_only));
            std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - t0;
            if (f >= warmup) {
                ms.push_back(d.count());
                positions += (prompt + all.front().frame) / frames;
            }
            for (auto& it : all) ++it.frame;
        }
        return median(ms);
    };
    batch_timing t;
    auto talker = timed(true, t.talker_positions);
    if (!talker) return talker.err();
    auto frame = timed(false, t.frame_positions);
    if (!frame) return frame.err();
    t.talker_ms = *talker;
    t.frame_ms = *frame;
    if (phases) {
        // One more frame, logged: apart from block 0's stores, the frame just timed.
        MEGATTS_TRY(gpu.log_phases(true));
        MEGATTS_TRY(gpu.run_frame(all, codes));
        MEGATTS_TRY(gpu.log_phases(false));
        auto spans = gpu.read_phases();
        if (!spans) return spans.err();
        t.phases = std::move(*spans);
    }
    for (int s = 0; s < B; ++s) gpu.release(s);
    return t;
}

int run_bench_kernels(const bench_options& o) {
    auto report = probe_cuda();
    auto device = usable_device(report, 0);
    if (!device) return report_error(device.err());
    auto ceiling = measure_copy_bandwidth(std::size_t{2} << 30, 20);
    if (!ceiling) return report_error(ceiling.err());

    auto c = checkpoint::open(o.model);
    if (!c) return report_error(c.err());
    const auto& cfg = c->config();
    auto tokenizer = bpe_tokenizer::load(o.model);
    if (!tokenizer) return report_error(tokenizer.err());
    auto ids = tokenize_tts_prompt(*tokenizer, "Benchmark sentence for the megakernel frame step.");
    if (!ids) return report_error(ids.err());
    auto plan = build_prompt(cfg, ids->ids, cfg.speakers.empty() ? "" : cfg.speakers.begin()->first, "english",
                             text_layout::non_streaming);
    if (!plan) return report_error(plan.err());

    const int max_batch = *std::max_element(o.batches.begin(), o.batches.end());
    const int positions = static_cast<int>(plan->rows.size()) + 2 * (o.frames + o.warmup) + 8;
    auto gpu = megakernel::create(megakernel_tensors_from(*c), {.slots = max_batch, .max_positions = std::max(positions, 256)},
                                  megakernel_policy_from(cfg), cfg.talker.body.rms_eps, cfg.talker.body.rope_theta);
    if (!gpu) return report_error(gpu.err());
    const auto bytes = count_bytes(cfg);

    std::printf("megatts bench kernels: %s, %d SMs, driver CUDA %s; model %s (%s)\n", device->name.c_str(),
                device->sm_count, format_cuda_version(report.driver_version).c_str(), o.model.c_str(),
                cfg.size_tag.c_str());
    std::printf("copy ceiling (device-to-device, read+write): %.0f GB/s\n", *ceiling);
    std::printf("weight bytes: talker step %.1f MB, whole frame %.1f MB; talker KV cache %.1f KB a session and position\n",
                bytes.talker / 1e6, bytes.frame / 1e6, bytes.kv_per_position / 1e3);
    std::printf("(KV MB: the B sessions' caches a timed launch reads and appends to, on average; GB/s: weights and\n"
                " KV over the time, %%ceil of the copy ceiling; weights GB/s: the weights alone)\n");
    std::printf("%6s %10s %8s %7s %6s %8s %10s %8s %7s %6s %8s %9s\n", "batch", "talker ms", "KV MB", "GB/s", "%ceil",
                "weights", "frame ms", "KV MB", "GB/s", "%ceil", "weights", "frames/s");
    nlohmann::json results = nlohmann::json::array();
    for (int B : o.batches) {
        auto t = time_batch(**gpu, *plan, cfg, B, o.frames, o.warmup, o.phases);
        if (!t) return report_error(t.err());
        const double talker_ms = t->talker_ms, frame_ms = t->frame_ms;
        const double talker_gbs = bytes.talker / (talker_ms / 1e3) / 1e9, frame_gbs = bytes.frame / (frame_ms / 1e3) / 1e9;
        const double talker_kv = B * t->talker_positions * bytes.kv_per_position,
                     frame_kv = B * t->frame_positions * bytes.kv_per_position;
        const double talker_all = (bytes.talker + talker_kv) / (talker_ms / 1e3) / 1e9,
                     frame_all = (bytes.frame + frame_kv) / (frame_ms / 1e3) / 1e9;
        std::printf("%6d %10.3f %8.1f %7.0f %5.1f%% %8.0f %10.3f %8.1f %7.0f %5.1f%% %8.0f %9.0f\n", B, talker_ms,
                    talker_kv / 1e6, talker_all, 100 * talker_all / *ceiling, talker_gbs, frame_ms, frame_kv / 1e6,
                    frame_all, 100 * frame_all / *ceiling, frame_gbs, B * 1e3 / frame_ms);
        // talker_gb_s and frame_gb_s stay the weights' alone, as in the records before the KV
        // bytes were counted; the _with_kv figures count both.
        nlohmann::json row = {{"batch", B},
                              {"talker_ms", talker_ms},
                              {"frame_ms", frame_ms},
                              {"talker_gb_s", talker_gbs},
                              {"frame_gb_s", frame_gbs},
                              {"talker_positions", t->talker_positions},
                              {"frame_positions", t->frame_positions},
                              {"talker_kv_bytes", talker_kv},
                              {"frame_kv_bytes", frame_kv},
                              {"talker_gb_s_with_kv", talker_all},
                              {"frame_gb_s_with_kv", frame_all},
                              {"frames_per_s", B * 1e3 / frame_ms}};
        if (o.phases) row["phases"] = report_phases(B, t->phases);
        results.push_back(row);
    }
    if (!o.json_out.empty()) {
        nlohmann::json doc = bench_record("kernels", report, *device, cfg.size_tag);
        doc["copy_gb_s"] = *ceiling;
        doc["talker_bytes"] = bytes.talker;
        doc["frame_bytes"] = bytes.frame;
        doc["frames_timed"] = o.frames;
        doc["results"] = results;
        write_json(o.json_out, doc);
    }
    return exit_ok;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
    auto* bench = app.add_subcommand(
        "bench", "Benchmarks: kernels, vocoder (need a CUDA GPU), latency and load (against a server)");
    bench->require_subcommand(1);
    auto o = std::make_shared<bench_options>();
    auto* kernels = bench->add_subcommand("kernels", "Megakernel frame step: ms per frame, GB/s, % of the copy ceiling");
    kernels->add_option("--model", o->model, "Checkpoint directory (make-checkpoint --shape 0.6b-customvoice)")
        ->capture_default_str();
    kernels->add_option("--batch", o->batches, "Batch sizes")->capture_default_str();
    kernels->add_option("--frames", o->frames, "Timed frames per batch size")->capture_default_str();
    kernels->add_flag("--phases", o->phases,
                      "Also log one frame per batch size phase by phase (where the launch's time goes)");
    kernels->add_option("--json", o->json_out, "Also write the results as JSON here");
    kernels->callback([o, &exit_code] { exit_code = run_bench_kernels(*o); });
    add_bench_load_command(*bench, exit_code);
    add_bench_vocoder_command(*bench, exit_code);
    add_bench_latency_command(*bench, exit_code);
}

}  // namespace megatts

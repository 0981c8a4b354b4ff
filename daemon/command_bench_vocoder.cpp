#include "daemon/command_bench_vocoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/bench_record.h"
#include "daemon/cli_exit.h"
#include "daemon/default_model.h"
#include "kernels/cuda/copy_bandwidth.h"
#include "kernels/cuda/cuda_probe.h"
#include "kernels/vocoder/cuda_vocoder.h"
#include "kernels/vocoder/vocoder_cost.h"
#include "pipeline/model/checkpoint.h"
#include "pipeline/model/vocoder_loader.h"

namespace megatts {
namespace {

struct vocoder_bench_options {
    std::string model = default_model_dir();
    std::vector<int> batches{1, 4, 16, 64};
    int calls = 200;
    int warmup = 10;
    bool no_graphs = false;
    bool no_pdl = false;
    bool no_cluster_sum = false;
    bool no_tf32 = false;
    int stack_items = cuda_vocoder_limits{}.frame_stack_items;
    std::string json_out;
};

struct batch_timing {
    double median_ms = 0, min_ms = 0;
};

// Admits B sessions, decodes them past the attention window (the steady state: a
// full window of keys per frame), then times `calls` calls of one frame each.
result<batch_timing> time_batch(cuda_vocoder& v, const ref::vocoder_weights& w, int B,
                                const vocoder_bench_options& o) {
    const int nq = w.dims.num_quantizers;
    std::mt19937 rng(static_cast<unsigned>(B));
    std::uniform_int_distribution<std::int32_t> code(0, w.dims.codebook_size - 1);
    std::vector<std::int32_t> codes(static_cast<std::size_t>(B) * nq);
    std::vector<vocoder_frame> items;
    for (int s = 0; s < B; ++s) {
        MEGATTS_TRY(v.admit(s));
        items.push_back({s, std::span(codes).subspan(static_cast<std::size_t>(s) * nq, static_cast<std::size_t>(nq))});
    }
    std::vector<float> pcm(static_cast<std::size_t>(B) * v.samples_per_frame());
    std::vector<double> ms;
    const int warmup = std::max(o.warmup, w.dims.sliding_window);
    for (int call = 0; call < warmup + o.calls; ++call) {
        for (auto& c : codes) c = code(rng);
        const auto t0 = std::chrono::steady_clock::now();
        MEGATTS_TRY(v.vocode(items, pcm));
        const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - t0;
        if (call >= warmup) ms.push_back(d.count());
    }
    for (int s = 0; s < B; ++s) v.release(s);
    return batch_timing{median(ms), *std::min_element(ms.begin(), ms.end())};
}

void print_cost(const vocoder_cost& c) {
    std::printf("per session-frame: %.3f GFLOP; weights streamed per call %.1f MB; per session: state %.2f MB, "
                "activations %.2f MB\n",
                c.flops / 1e9, c.weight_bytes / 1e6, c.state_bytes / 1e6, c.activation_bytes / 1e6);
    std::printf("%-18s %10s %12s\n", "stage", "GFLOP", "weights MB");
    for (const auto& s : c.stages) std::printf("%-18s %10.3f %12.1f\n", s.name.c_str(), s.flops / 1e9, s.weight_bytes / 1e6);
}

int run_bench_vocoder(const vocoder_bench_options& o) {
    auto report = probe_cuda();
    auto device = usable_device(report, 0);
    if (!device) return report_error(device.err());
    auto ceiling = measure_copy_bandwidth(std::size_t{2} << 30, 20);
    if (!ceiling) return report_error(ceiling.err());
    auto c = checkpoint::open(o.model);
    if (!c) return report_error(c.err());
    auto w = load_vocoder_weights(*c);
    if (!w) return report_error(w.err());
    const vocoder_cost cost = count_vocoder_cost(*w);
    const int max_batch = *std::max_element(o.batches.begin(), o.batches.end());
    auto v = cuda_vocoder::create(*w, {.slots = max_batch, .max_batch = max_batch, .graphs = !o.no_graphs,
                                       .programmatic_launch = !o.no_pdl, .frame_stack_items = o.stack_items,
                                       .cluster_sum = !o.no_cluster_sum, .tf32_convs = !o.no_tf32});
    if (!v) return report_error(v.err());

    const std::string stack = o.stack_items > 0 ? "frame stack up to " + std::to_string(o.stack_items) + " sessions"
                                                : "a launch per transformer product";
    std::printf("megatts bench vocoder: %s, %d SMs, driver CUDA %s; model %s (%s); %s, %s, %s, %s, %s\n",
                device->name.c_str(), device->sm_count, format_cuda_version(report.driver_version).c_str(),
                o.model.c_str(), c->config().size_tag.c_str(), o.no_graphs ? "direct launches" : "CUDA graphs",
                o.no_pdl ? "no programmatic launch" : "programmatic launch", stack.c_str(),
                o.no_cluster_sum ? "split K through global memory" : "split K within clusters where they fit",
                o.no_tf32 ? "bf16x3 7-tap convs" : "TF32 7-tap convs where the GPU has wgmma");
    std::printf("copy ceiling (device-to-device, read+write): %.0f GB/s; device memory: weights %.1f MB, "
                "state %.2f MB per slot\n",
                *ceiling, (*v)->weight_bytes() / 1e6, (*v)->state_bytes_per_slot() / 1e6);
    print_cost(cost);
    std::printf("%6s %10s %10s %14s %9s %7s %10s %12s\n", "batch", "ms/call", "min ms", "ms/session", "GB/s", "%ceil",
                "GFLOP/s", "x real time");
    const double frame_ms = 1e3 * (*v)->samples_per_frame() / w->dims.output_sample_rate;
    nlohmann::json results = nlohmann::json::array();
    for (int B : o.batches) {
        auto t = time_batch(**v, *w, B, o);
        if (!t) return report_error(t.err());
        const double s = t->median_ms / 1e3;
        const double gbs = cost.call_bytes(B) / s / 1e9, gflops = B * cost.flops / s / 1e9;
        const double realtime = B * frame_ms / t->median_ms;
        std::printf("%6d %10.3f %10.3f %14.4f %9.0f %6.1f%% %10.0f %12.1f\n", B, t->median_ms, t->min_ms,
                    t->median_ms / B, gbs, 100 * gbs / *ceiling, gflops, realtime);
        results.push_back({{"batch", B}, {"ms_per_call", t->median_ms}, {"min_ms_per_call", t->min_ms},
                           {"gb_s", gbs}, {"gflop_s", gflops}, {"x_real_time", realtime}});
    }
    if (!o.json_out.empty()) {
        nlohmann::json stages = nlohmann::json::array();
        for (const auto& st : cost.stages)
            stages.push_back({{"name", st.name}, {"flops", st.flops}, {"weight_bytes", st.weight_bytes}});
        nlohmann::json doc = bench_record("vocoder", report, *device, c->config().size_tag);
        doc["graphs"] = !o.no_graphs;
        doc["programmatic_launch"] = !o.no_pdl;
        doc["frame_stack_items"] = o.stack_items;
        doc["cluster_sum"] = !o.no_cluster_sum;
        doc["tf32_convs"] = !o.no_tf32;
        doc["copy_gb_s"] = *ceiling;
        doc["flops_per_frame"] = cost.flops;
        doc["weight_bytes_per_call"] = cost.weight_bytes;
        doc["state_bytes_per_session"] = cost.state_bytes;
        doc["activation_bytes_per_session"] = cost.activation_bytes;
        doc["stages"] = stages;
        doc["calls_timed"] = o.calls;
        doc["results"] = results;
        write_json(o.json_out, doc);
    }
    return exit_ok;
}

}  // namespace

void add_bench_vocoder_command(CLI::App& bench, int& exit_code) {
    auto o = std::make_shared<vocoder_bench_options>();
    auto* cmd = bench.add_subcommand("vocoder", "CUDA vocoder: ms per call by batch size, GB/s, GFLOP/s");
    cmd->add_option("--model", o->model, "Checkpoint directory (make-checkpoint --shape 0.6b-customvoice)")
        ->capture_default_str();
    cmd->add_option("--batch", o->batches, "Batch sizes")->capture_default_str()->check(CLI::Range(1, cuda_vocoder_limits::max_items));
    cmd->add_option("--calls", o->calls, "Timed calls per batch size")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_flag("--no-graphs", o->no_graphs, "Launch the kernels one by one instead of replaying CUDA graphs");
    cmd->add_flag("--no-pdl", o->no_pdl, "Serialise the kernels fully (no programmatic dependent launch)");
    cmd->add_flag("--no-cluster-sum", o->no_cluster_sum,
                  "Add split K's partial tiles through global memory, never within thread-block clusters");
    cmd->add_flag("--no-tf32", o->no_tf32,
                  "Multiply the decoder blocks' 7-tap convs as bf16x3 (f32-accurate) on Hopper too, not TF32");
    cmd->add_option("--stack-items", o->stack_items,
                    "Calls of up to this many sessions run the frame-rate transformer as one persistent launch "
                    "(0: a launch per product and attention)")
        ->capture_default_str()
        ->check(CLI::Range(0, cuda_vocoder_limits::max_frame_stack_items));
    cmd->add_option("--json", o->json_out, "Also write the results as JSON here");
    cmd->callback([o, &exit_code] { exit_code = run_bench_vocoder(*o); });
}

}  // namespace megatts

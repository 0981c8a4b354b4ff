#include "daemon/command_doctor.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include "daemon/cli_exit.h"
#include "daemon/default_model.h"
#include "kernels/cuda/cuda_probe.h"
#include "pipeline/model/checkpoint.h"

namespace megatts {
namespace {

double gib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

std::size_t file_size(const std::string& path) {
    std::error_code ec;
    auto n = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<std::size_t>(n);
}

int run_doctor(const std::string& model_dir) {
    auto r = probe_cuda();
    std::printf("megatts doctor\n");
    std::printf("  CUDA in this build : %s\n", r.built_with_cuda ? "yes" : "no");
    if (r.built_with_cuda) {
        std::printf("  architectures      : %s\n", r.compiled_archs.c_str());
        std::printf("  driver supports    : CUDA %s\n", format_cuda_version(r.driver_version).c_str());
        std::printf("  runtime            : CUDA %s\n", format_cuda_version(r.runtime_version).c_str());
    }
    for (const auto& d : r.devices)
        std::printf("  device %d           : %s, sm_%d%d, %d SMs, L2 %.0f MiB, %.1f GiB (%.1f free), kernel image: %s\n",
                    d.index, d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
                    static_cast<double>(d.l2_bytes) / (1024.0 * 1024.0), gib(d.total_memory), gib(d.free_memory),
                    d.has_kernel_image ? "yes" : "NO");
    auto device = usable_device(r, 0);
    if (device) std::printf("  backend            : cuda available on device 0\n");
    else std::printf("  backend            : cuda unavailable (%s); the cpu backend (reference, slow) works\n",
                     device.err().message.c_str());

    auto c = checkpoint::open(model_dir);
    if (!c) {
        std::printf("  model              : %s: %s\n", model_dir.c_str(), c.err().message.c_str());
        return report_error(c.err());
    }
    const auto& cfg = c->config();
    std::size_t weights = file_size(model_dir + "/model.safetensors") +
                          file_size(model_dir + "/speech_tokenizer/model.safetensors");
    std::printf("  model              : %s (%s %s, talker %d x %d, %s)\n", model_dir.c_str(),
                std::string(model_kind_name(cfg.kind)).c_str(), cfg.size_tag.c_str(), cfg.talker.body.layers,
                cfg.talker.body.hidden, is_synthetic_model(model_dir) ? "SYNTHETIC random weights" : "weights");
    std::printf("  weights on disk    : %.2f GiB\n", gib(weights));
    if (device)
        std::printf("  fits on device 0   : %s (%.2f GiB free)\n",
                    weights < device->free_memory ? "yes" : "NO", gib(device->free_memory));
    return exit_ok;
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("doctor", "Show what this machine and binary can run");
    auto model = std::make_shared<std::string>(default_model_dir());
    cmd->add_option("--model", *model, "Checkpoint directory to check")->capture_default_str();
    cmd->callback([model, &exit_code] { exit_code = run_doctor(*model); });
}

}  // namespace megatts

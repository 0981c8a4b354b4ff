#include "daemon/command_make_checkpoint.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "daemon/cli_exit.h"
#include "pipeline/model/random_checkpoint.h"

namespace megatts {
namespace {

struct make_checkpoint_options {
    std::string shape;
    std::uint64_t seed = 0;
    std::string out;
    std::string data_dir = MEGATTS_DATA_DIR;
};

int run_make_checkpoint(const make_checkpoint_options& o) {
    auto shape = parse_checkpoint_shape(o.shape);
    if (!shape)
        return report_error(make_error(error_kind::invalid_input, "--shape '" + o.shape +
                                                                      "': expected tiny, 0.6b-customvoice or 1.7b-customvoice"));
    auto start = std::chrono::steady_clock::now();
    auto made = make_random_checkpoint({.shape = *shape, .seed = o.seed, .out_dir = o.out, .data_dir = o.data_dir});
    if (!made) return report_error(made.err());
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("wrote %s checkpoint (seed %llu, synthetic random weights) to %s in %.1f s\n",
                std::string(checkpoint_shape_name(*shape)).c_str(), static_cast<unsigned long long>(o.seed),
                o.out.c_str(), took.count());
    return exit_ok;
}

}  // namespace

void add_make_checkpoint_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<make_checkpoint_options>();
    auto* cmd = app.add_subcommand("make-checkpoint", "Write a checkpoint with random weights (HF layout)");
    cmd->add_option("--shape", o->shape, "tiny, 0.6b-customvoice or 1.7b-customvoice")->required();
    cmd->add_option("--seed", o->seed, "Seed of the weights")->capture_default_str();
    cmd->add_option("--out", o->out, "Directory to create (must not exist or be empty)")->required();
    cmd->add_option("--data-dir", o->data_dir, "Where the published configs and tokenizer files are")
        ->capture_default_str();
    cmd->callback([o, &exit_code] { exit_code = run_make_checkpoint(*o); });
}

}  // namespace megatts

// megatts: the command-line entry point; each subcommand lives in its own file.
#include <CLI/CLI.hpp>

#include "daemon/cli_exit.h"
#include "daemon/command_bench.h"
#include "daemon/command_doctor.h"
#include "daemon/command_make_checkpoint.h"
#include "daemon/command_say.h"
#include "daemon/command_serve.h"

int main(int argc, char** argv) {
    CLI::App app{"megatts: real-time text-to-speech for the Qwen3-TTS 12 Hz models"};
    app.require_subcommand(1);
    int exit_code = megatts::exit_ok;
    megatts::add_doctor_command(app, exit_code);
    megatts::add_say_command(app, exit_code);
    megatts::add_serve_command(app, exit_code);
    megatts::add_make_checkpoint_command(app, exit_code);
    megatts::add_bench_command(app, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : megatts::exit_usage;
    }
    return exit_code;
}

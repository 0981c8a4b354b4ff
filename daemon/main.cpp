// megatts: the command-line entry point; dispatches to subcommands.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
    CLI::App app{"megatts: real-time text-to-speech for the Qwen3-TTS 12 Hz models"};
    app.require_subcommand(1);
    CLI11_PARSE(app, argc, argv);
    return 0;
}

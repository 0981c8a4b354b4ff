// command_serve: `megatts serve`: the daemon. Reads the configuration (--config FILE, else the
// built-in defaults, which equal configs/megatts.toml), applies the command-line overrides
// (--listen, --model, --web-root, --threads, --log-level), binds the port and prints the URL,
// then loads the model, warms it up, reports ready (/readyz) and serves until SIGINT or SIGTERM,
// after which it drains (DESIGN.md §6) and exits 0.
//
// Under systemd (configs/systemd/megatts.service, Type=notify) it also sends STATUS= and
// EXTEND_TIMEOUT_USEC= while loading, READY=1 once ready, WATCHDOG=1 while the event loop and
// the engine make progress (service_heartbeat) and STOPPING=1 when the drain begins; it adopts
// the listening socket of megatts.socket when one is passed (socket activation), and its log
// lines carry syslog priorities when stderr is the journal.
//
// Exit codes as cli_exit.h: 2 for a bad configuration, a missing model or web root, or a
// backend that cannot run here (--backend cuda is refused with the reason, never replaced by
// cpu); 1 for a port that cannot be bound or a model that fails its warm-up.
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace megatts

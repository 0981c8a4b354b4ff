#include "daemon/command_serve.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include "daemon/cli_exit.h"
#include "daemon/config/config_loader.h"
#include "daemon/default_model.h"
#include "daemon/engine_identity.h"
#include "daemon/server/server.h"
#include "daemon/server/server_context.h"
#include "daemon/server/warm_up.h"
#include "daemon/systemd/inherited_socket.h"
#include "daemon/systemd/journal_logging.h"
#include "daemon/systemd/service_heartbeat.h"
#include "daemon/systemd/service_notifier.h"
#include "pipeline/engine/cuda_backend.h"
#include "pipeline/engine/fault_injecting_backend.h"
#include "pipeline/engine/reference_backend.h"
#include "pipeline/session/tts_service.h"
#include "pipeline/synthesis/reference_model.h"

namespace megatts {
namespace {

// The warm-up utterance: a few frames exercise every stage (prefill, talker, code predictor,
// vocoder, Opus) without costing a long start on the CPU backend.
constexpr int warm_up_frames = 4;

struct serve_options {
    std::string config_file;
    std::optional<std::string> listen;
    std::optional<std::string> model;
    std::optional<std::string> backend;
    std::optional<std::string> web_root;
    std::optional<int> threads;
    std::optional<std::string> log_level;
    std::optional<std::string> trace_dir;
    int inject_engine_fault = 0;  // testing: the backend fails at this generate() call (0: never)
};

result<server_config> resolve_config(const serve_options& o) {
    server_config config;
    if (!o.config_file.empty()) {
        auto loaded = load_server_config(o.config_file);
        if (!loaded) return loaded.err();
        config = std::move(*loaded);
    }
    if (o.listen) {
        auto address = parse_listen_address(*o.listen);
        if (!address) return make_error(error_kind::invalid_input, "--listen: " + address.err().message);
        config.server.listen = *address;
    }
    if (o.model) config.model.dir = *o.model;
    if (o.backend) config.model.backend = *o.backend;
    if (o.web_root) config.server.web_root = *o.web_root;
    if (o.threads) config.server.threads = *o.threads;
    if (o.log_level) config.log.level = *o.log_level;
    if (o.trace_dir) config.server.trace_dir = *o.trace_dir;
    if (config.model.dir.empty()) config.model.dir = default_model_dir();
    if (config.server.web_root.empty()) config.server.web_root = MEGATTS_WEB_DIR;
    if (config.server.threads == 0) config.server.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return config;
}

// The cuda backend asked of a machine that cannot run it is a setting to change (exit 2), said
// with the reason before anything loads; never a silent fall-back to the CPU.
result<engine_identity> check_backend(const std::string& backend) {
    auto identity = identify_engine(backend);
    if (!identity) return make_error(error_kind::mismatch, "model.backend cuda: " + identity.err().message);
    return identity;
}

result<std::unique_ptr<engine_backend>> make_backend(const server_config& config, const serve_options& o,
                                                     const reference_model& model) {
    const auto& e = config.engine;
    std::unique_ptr<engine_backend> backend;
    if (config.model.backend == "cpu") {
        backend = make_reference_backend(model, e.slots, e.max_positions);
    } else {
        auto cuda = make_cuda_backend(model, e.slots, e.max_positions, config.model.vocoder_precision == "tf32");
        if (!cuda) return make_error(cuda.err().kind, "model.backend cuda: " + cuda.err().message);
        backend = std::move(*cuda);
    }
    if (o.inject_engine_fault > 0) backend = inject_fault(std::move(backend), o.inject_engine_fault);
    return backend;
}

result<std::filesystem::path> canonical_directory(const std::string& path, const char* what) {
    std::error_code ec;
    auto canonical = std::filesystem::canonical(path, ec);
    if (ec || !std::filesystem::is_directory(canonical, ec))
        return make_error(error_kind::not_found, std::string(what) + " " + path + ": not a directory");
    return canonical;
}

// The trace directory is made if missing; one that cannot be is a setting to change.
result<void> prepare_trace_dir(const std::string& dir) {
    if (dir.empty()) return {};
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir, ec))
        return make_error(error_kind::invalid_input, "server.trace_dir " + dir + ": not a directory we can make");
    return {};
}

std::string url_of(const boost::asio::ip::tcp::endpoint& endpoint) {
    const auto address = endpoint.address();
    const auto host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
    return "http://" + host + ":" + std::to_string(endpoint.port()) + "/";
}

// A start that cannot go on: the error on stderr (the journal) and in systemd's STATUS=.
int fail_start(service_notifier& notifier, const error& e) {
    notifier.status("failed: " + e.message);
    return report_error(e);
}

int run_serve(const serve_options& o) {
    const auto started = std::chrono::steady_clock::now();
    service_notifier notifier;
    configure_logging(spdlog::level::info);
    auto config = resolve_config(o);
    if (!config) return fail_start(notifier, config.err());
    configure_logging(spdlog::level::from_str(config->log.level));
    auto engine = check_backend(config->model.backend);
    if (!engine) return fail_start(notifier, engine.err());
    auto web_root = canonical_directory(config->server.web_root, "web root");
    if (!web_root) return fail_start(notifier, web_root.err());
    auto model_dir = canonical_directory(config->model.dir, "model");
    if (!model_dir) return fail_start(notifier, model_dir.err());
    if (auto traces = prepare_trace_dir(config->server.trace_dir); !traces) return fail_start(notifier, traces.err());
    auto inherited = inherited_listen_socket();
    if (!inherited) return fail_start(notifier, inherited.err());

    metrics_registry registry;
    auto metrics = server_metrics::create(registry);
    if (!metrics) return fail_start(notifier, metrics.err());
    if (auto published = publish_engine_identity(registry, *engine); !published)
        return fail_start(notifier, published.err());
    const model_description description{model_dir->filename().string(), is_synthetic_model(model_dir->string())};
    server_context context(*config, *web_root, description, registry, *metrics);
    auto net = server::create(context, *inherited);
    if (!net) return fail_start(notifier, net.err());

    // The URL first, so that a person (or a test) knows where to look while the model loads.
    std::printf("megatts: listening on %s%s (model %s%s)\n", url_of((*net)->endpoint()).c_str(),
                *inherited ? " (socket from systemd)" : "", description.name.c_str(),
                description.synthetic ? ", SYNTHETIC: random weights, the audio is noise" : "");
    std::fflush(stdout);
    (*net)->on_drain([&notifier, &context] {
        notifier.stopping("draining: " + std::to_string(context.sessions().size()) + " session(s) left");
    });
    (*net)->start(config->server.threads);
    service_heartbeat heartbeat(notifier, context, (*net)->io_context(), started,
                                std::chrono::seconds(config->server.start_timeout_s));
    heartbeat.start();

    std::optional<error> failure;
    // The cuda backend reads the bf16 checkpoint; only the CPU one needs the f32 copies.
    auto model = reference_model::load(model_dir->string(), /*with_reference_weights=*/config->model.backend == "cpu");
    auto backend = model ? make_backend(*config, o, *model) : result<std::unique_ptr<engine_backend>>(model.err());
    std::atomic<bool> engine_failed{false};
    // The engine thread may fail while the server is being torn down: it stops the server only
    // while there is one.
    std::mutex stop_mutex;
    server* to_stop = net->get();
    std::unique_ptr<tts_service> service;
    if (!backend) {
        failure = backend.err();
    } else {
        tts_service_config service_config{
            .max_sessions = config->server.max_sessions,
            .session = {.max_text_bytes = static_cast<std::size_t>(config->limits.max_text_bytes),
                        .max_queued_utterances = config->limits.queued_utterances,
                        .input_queue_frames = config->limits.input_queue_messages,
                        .soft_queue_ms = config->send_queue.soft_ms},
            .engine = {.lead_limit = std::chrono::milliseconds(config->engine.lead_ms),
                       .first_audio_yield = std::chrono::milliseconds(config->engine.first_audio_yield_ms),
                       .join_lead = std::chrono::milliseconds(config->engine.join_lead_ms),
                       .max_batch = config->engine.max_batch,
                       .choice_margin = std::chrono::microseconds(config->engine.choice_margin_us)},
            // Sessions were told; now unhealthy, and out with a non-zero status so that the
            // supervisor restarts the process (a CUDA context does not recover from an error).
            .on_engine_failure =
                [&](const std::string& reason) {
                    spdlog::error("engine failed: {}", reason);
                    engine_failed = true;
                    context.set_failed(reason);
                    std::lock_guard lock(stop_mutex);
                    if (to_stop) to_stop->request_stop();
                }};
        auto created = tts_service::create(*model, std::move(*backend), registry, service_config);
        if (!created) failure = created.err();
        else service = std::move(*created);
    }
    if (service && context.set_service(*service)) {
        auto warmed = warm_up(*service, boost::asio::make_strand((*net)->io_context()), context.default_voice(),
                              config->model.warmup_text, warm_up_frames,
                              std::chrono::seconds(config->server.start_timeout_s));
        if (!warmed) {
            failure = warmed.err();
        } else if (context.set_ready()) {
            // Model loaded, warm-up done, socket listening: only now is the service started.
            notifier.ready("ready: 0 of " + std::to_string(config->server.max_sessions) + " sessions");
            spdlog::info("ready: warm-up of {} frames took {:.1f} ms; {:.1f} s after start", warmed->frames,
                         warmed->milliseconds,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
    }
    if (failure) (*net)->request_stop();
    (*net)->wait();
    heartbeat.stop();  // it reads the service's engine: stop it first
    {
        std::lock_guard lock(stop_mutex);
        to_stop = nullptr;
    }
    // Connections hold sessions of the service, which holds the model: tear down in that order.
    net->reset();
    service.reset();
    if (failure) return fail_start(notifier, *failure);  // after the drain's STATUS, so that this one stays
    if (engine_failed) {
        // Not exit 2 (a setting to change): systemd restarts on this one (RestartPreventExitStatus=2).
        notifier.status("failed: the engine failed: " + context.failure());
        return exit_failure;
    }
    spdlog::info("stopped");
    return exit_ok;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<serve_options>();
    auto* cmd = app.add_subcommand("serve", "Run the daemon: HTTP, WebSocket and the page on one port");
    cmd->add_option("--config,-c", o->config_file, "TOML configuration (default: built-in, as configs/megatts.toml)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--listen", o->listen, "HOST:PORT, overrides server.listen (port 0: any free port)");
    cmd->add_option("--model", o->model, "Checkpoint directory, overrides model.dir");
    cmd->add_option("--backend", o->backend, "cpu or cuda, overrides model.backend")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--web-root", o->web_root, "Directory of the page, overrides server.web_root");
    cmd->add_option("--threads", o->threads, "Network threads, overrides server.threads (0: one per core)")
        ->check(CLI::Range(0, 256));
    cmd->add_option("--trace", o->trace_dir,
                    "Write one Chrome-trace JSON file per utterance (Perfetto) into this directory, overrides "
                    "server.trace_dir");
    cmd->add_option("--log-level", o->log_level, "Overrides log.level")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    // Testing only (the e2e suite's FAILED path), so not in --help.
    cmd->add_option("--inject-engine-fault", o->inject_engine_fault,
                    "Testing: the engine's backend fails at this generate() call, as on a CUDA error")
        ->check(CLI::Range(1, 1 << 30))
        ->group("");
    cmd->callback([o, &exit_code] { exit_code = run_serve(*o); });
}

}  // namespace megatts

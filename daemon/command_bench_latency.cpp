#include "daemon/command_bench_latency.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/bench/ws_url.h"
#include "daemon/bench_latency_client.h"
#include "daemon/bench_latency_server.h"
#include "daemon/bench_record.h"
#include "daemon/cli_exit.h"
#include "daemon/default_model.h"
#include "daemon/engine_identity.h"

namespace megatts {
namespace {

namespace fs = std::filesystem;

const std::string k_short = "Hello there, how are you today?";
const std::string k_long =
    "The quick brown fox jumps over the lazy dog while the band plays a long and slow song about the sea, "
    "the wind and the stars above the quiet town.";
const std::vector<std::string> k_case_names{"short-whole", "short-words", "long-whole", "long-words"};

struct latency_options {
    std::optional<std::string> url;
    std::string model = default_model_dir();
    std::string backend = "cpu";
    int runs = 20;
    std::vector<std::string> cases = k_case_names;
    std::string voice = "ryan";
    std::uint64_t seed = 1;
    int timeout_s = 600;
    std::string json_out;
};

struct bench_case {
    std::string name;
    std::vector<std::string> chunks;
    bool whole = true;
};

// Words as a client types them: each with the space that follows it.
std::vector<std::string> words_of(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) words.push_back(w + " ");
    if (!words.empty()) words.back().pop_back();
    return words;
}

bench_case case_named(const std::string& name) {
    const std::string& text = name.starts_with("short") ? k_short : k_long;
    if (name.ends_with("whole")) return {name, {text}, true};
    return {name, words_of(text), false};
}

// Nearest-rank percentile.
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

struct case_result {
    bench_case what;
    std::vector<latency_sample> samples;
};

struct url_parts {
    std::string host, path;
    std::uint16_t port = 0;
};

result<url_parts> parse_url(const std::string& url) {
    static const std::regex form(R"(ws://(\[[^\]]+\]|[^:/]+):([0-9]{1,5})(/.*)?)");
    std::smatch m;
    if (!std::regex_match(url, m, form) || std::stoi(m[2]) > 65535)
        return make_error(error_kind::invalid_input, "--url " + url + ": expected ws://HOST:PORT/v1/tts");
    std::string host = m[1];
    if (host.front() == '[') host = host.substr(1, host.size() - 2);
    return url_parts{host, m[3].matched ? std::string(m[3]) : "/v1/tts", static_cast<std::uint16_t>(std::stoi(m[2]))};
}

nlohmann::json summarise(const case_result& r) {
    std::vector<double> server, client, speed, audio;
    std::vector<std::string> stage_names;
    std::vector<std::vector<double>> stages;
    for (const auto& s : r.samples) {
        server.push_back(s.server_ttfa_ms);
        client.push_back(s.client_ttfa_ms);
        if (s.rtf > 0) speed.push_back(1.0 / s.rtf);
        audio.push_back(s.audio_ms);
        for (std::size_t i = 1; i < s.marks.size(); ++i) {
            const auto& name = s.marks[i].first;
            auto at = std::find(stage_names.begin(), stage_names.end(), name);
            if (at == stage_names.end()) {
                stage_names.push_back(name);
                stages.emplace_back();
                at = stage_names.end() - 1;
            }
            stages[static_cast<std::size_t>(at - stage_names.begin())].push_back(s.marks[i].second -
                                                                                s.marks[i - 1].second);
        }
    }
    // An array, in pipeline order: the stages' order is part of the breakdown.
    auto stage_p50 = nlohmann::json::array();
    for (std::size_t i = 0; i < stage_names.size(); ++i)
        stage_p50.push_back({{"stage", stage_names[i]}, {"ms", median(stages[i])}});
    return {{"case", r.what.name},
            {"layout", r.samples.empty() ? "" : r.samples.front().layout},
            {"messages", r.what.chunks.size()},
            {"runs", r.samples.size()},
            {"server_ttfa_ms", {{"p50", percentile(server, 50)}, {"p95", percentile(server, 95)}}},
            {"client_ttfa_ms", {{"p50", percentile(client, 50)}, {"p95", percentile(client, 95)}}},
            {"stages_p50_ms", stage_p50},
            {"x_real_time_p50", median(speed)},
            {"audio_ms_p50", median(audio)}};
}

void print_table(const std::vector<nlohmann::json>& rows) {
    std::printf("%-12s %-9s %5s %10s %10s %10s %10s %10s %10s\n", "case", "layout", "runs", "server p50",
                "server p95", "client p50", "client p95", "x realtime", "audio s");
    for (const auto& r : rows) {
        std::printf("%-12s %-9s %5d %10.2f %10.2f %10.2f %10.2f %10.1f %10.2f\n", r["case"].get<std::string>().c_str(),
                    r["layout"].get<std::string>().c_str(), r["runs"].get<int>(),
                    r["server_ttfa_ms"]["p50"].get<double>(), r["server_ttfa_ms"]["p95"].get<double>(),
                    r["client_ttfa_ms"]["p50"].get<double>(), r["client_ttfa_ms"]["p95"].get<double>(),
                    r["x_real_time_p50"].get<double>(), r["audio_ms_p50"].get<double>() / 1000.0);
    }
    std::printf("\nserver TTFA by stage, p50 ms (each mark minus the one before):\n%-12s", "case");
    for (const auto& stage : rows.front()["stages_p50_ms"]) std::printf(" %12s", stage["stage"].get<std::string>().c_str());
    std::printf("\n");
    for (const auto& r : rows) {
        std::printf("%-12s", r["case"].get<std::string>().c_str());
        for (const auto& stage : r["stages_p50_ms"]) std::printf(" %12.3f", stage["ms"].get<double>());
        std::printf("\n");
    }
}

// The record's identity: the server's engine as its /metrics says, not this machine's.
nlohmann::json make_record(const std::optional<engine_identity>& engine, const std::string& model) {
    const auto e = engine.value_or(unpublished_engine());
    auto doc = bench_record_of("latency", e.device, e.driver, e.runtime, model);
    doc["backend"] = e.backend;
    return doc;
}

int run_bench_latency(const latency_options& o) {
    std::vector<bench_case> cases;
    for (const auto& name : o.cases) cases.push_back(case_named(name));
    const auto timeout = std::chrono::seconds(o.timeout_s);

    std::unique_ptr<bench_latency_server> spawned;
    const auto work = fs::temp_directory_path() / ("megatts-bench-latency-" + std::to_string(::getpid()));
    url_parts where;
    if (o.url) {
        auto parsed = parse_url(*o.url);
        if (!parsed) return report_error(parsed.err());
        where = *parsed;
    } else {
        std::error_code ec;
        fs::create_directories(work, ec);
        if (ec) return report_error(make_error(error_kind::unavailable, "cannot make " + work.string()));
        std::ofstream(work / "bench.toml") << "[engine]\nlead_ms = 0\n";
        auto started = bench_latency_server::start({"--config", (work / "bench.toml").string(), "--model", o.model,
                                                    "--backend", o.backend, "--log-level", "warn"},
                                                   work / "serve.log", timeout);
        if (!started) return report_error(started.err());
        spawned = std::move(*started);
        where = {"127.0.0.1", "/v1/tts", spawned->port()};
    }
    // A failure against the daemon started here points at its log (left in place).
    auto fail = [&](const error& e) {
        if (spawned) std::fprintf(stderr, "megatts bench latency: the daemon's log: %s\n", (work / "serve.log").c_str());
        return report_error(e);
    };
    auto client = bench_latency_client::connect(where.host, where.port, where.path, timeout);
    if (!client) return fail(client.err());
    const auto& ready = (*client)->ready();
    std::printf("megatts bench latency: %s, model %s%s, %d runs per case, one session\n",
                o.url ? o.url->c_str() : ("megatts serve --backend " + o.backend + " (started here)").c_str(),
                ready.model.c_str(), ready.synthetic ? " (SYNTHETIC: random weights)" : "", o.runs);

    std::vector<case_result> results;
    for (const auto& c : cases) {
        auto& r = results.emplace_back(case_result{c, {}});
        for (int run = 0; run < o.runs; ++run) {
            auto sample = (*client)->speak(c.chunks, c.whole, o.voice, o.seed + static_cast<std::uint64_t>(run), timeout);
            if (!sample) return fail(sample.err());
            r.samples.push_back(std::move(*sample));
        }
    }
    std::vector<nlohmann::json> rows;
    for (const auto& r : results) rows.push_back(summarise(r));
    print_table(rows);
    if (!o.json_out.empty()) {
        const auto address = bench::resolve_host(where.host);
        nlohmann::json doc = make_record(address ? fetch_engine_identity(*address, where.port) : std::nullopt,
                                         ready.model);
        doc["synthetic"] = ready.synthetic;
        doc["server"] = o.url ? *o.url : "spawned";
        doc["runs"] = o.runs;
        doc["cases"] = rows;
        write_json(o.json_out, doc);
    }
    client->reset();
    spawned.reset();
    std::error_code ec;
    fs::remove_all(work, ec);
    return exit_ok;
}

}  // namespace

void add_bench_latency_command(CLI::App& bench, int& exit_code) {
    auto o = std::make_shared<latency_options>();
    auto* cmd = bench.add_subcommand("latency", "One session's TTFA (server and client) by stage, and speed");
    auto* url = cmd->add_option("--url", o->url, "A running daemon, ws://HOST:PORT/v1/tts (default: start one here)");
    auto* model = cmd->add_option("--model", o->model, "Checkpoint directory of the daemon started here")->capture_default_str();
    auto* backend = cmd->add_option("--backend", o->backend, "cpu or cuda, for the daemon started here")
                        ->capture_default_str()
                        ->check(CLI::IsMember({"cpu", "cuda"}));
    url->excludes(model)->excludes(backend);
    cmd->add_option("--runs", o->runs, "Utterances per case")->capture_default_str()->check(CLI::Range(1, 100000));
    cmd->add_option("--cases", o->cases, "Cases to run")->capture_default_str()->check(CLI::IsMember(k_case_names));
    cmd->add_option("--voice", o->voice, "Voice")->capture_default_str();
    cmd->add_option("--seed", o->seed, "Seed of the first run (run i uses seed + i)")->capture_default_str();
    cmd->add_option("--timeout", o->timeout_s, "Seconds any one step (start, an utterance) may take")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--json", o->json_out, "Also write the results as JSON here");
    cmd->callback([o, &exit_code] { exit_code = run_bench_latency(*o); });
}

}  // namespace megatts

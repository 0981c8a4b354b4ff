#include "daemon/command_bench_load.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/bench/load_report.h"
#include "daemon/bench/rate_run.h"
#include "daemon/bench/rate_summary.h"
#include "daemon/bench/ws_url.h"
#include "daemon/bench_record.h"
#include "daemon/build_info.h"
#include "daemon/cli_exit.h"
#include "daemon/client/tts_client.h"
#include "daemon/engine_identity.h"

namespace megatts {
namespace {

using namespace megatts::bench;

struct load_options {
    std::string url = "ws://127.0.0.1:8080/v1/tts";
    std::vector<double> rates;
    double duration_s = 30;
    std::uint64_t seed = 1;
    std::string format = "opus";
    std::string voice;
    std::vector<std::string> languages{"english", "chinese"};
    int jitter_ms = 60;
    double timeout_s = 120;
    std::uint64_t sampling_seeds = 0;
    bool greedy = false;
    bool frames_at_pace = false;
    std::string json_out;
    bool record_requests = false;
};

// The server's ready event, read once before the first rate: whether it answers at all, and
// what to name it in the record.
result<ready_event> probe_server(const client::client_options& options) {
    auto c = client::tts_client::connect(options);
    if (!c) return c.err();
    auto first = c->receive(std::chrono::seconds(10));
    if (!first) return first.err();
    const auto* event = std::get_if<server_event>(&*first);
    const auto* ready = event ? std::get_if<ready_event>(event) : nullptr;
    if (!ready) return make_error(error_kind::unavailable, "the server's first message is not ready (busy or draining?)");
    auto out = *ready;
    (void)c->close();
    return out;
}

int run_bench_load(const load_options& o) {
    auto url = parse_ws_url(o.url);
    if (!url) return report_error(url.err());
    auto address = resolve_host(url->host);
    if (!address) return report_error(address.err());
    const auto format = audio_format_from_name(o.format);
    if (!format) return report_error(make_error(error_kind::invalid_input, "--format must be opus or pcm16"));
    auto sentences = sentences_in(o.languages);
    if (!sentences) return report_error(sentences.err());
    if (o.rates.empty()) return report_error(make_error(error_kind::invalid_input, "--rate: give at least one rate"));

    request_spec request{.voice = o.voice,
                         .format = *format,
                         .greedy = o.greedy,
                         .connection = {.host = *address, .port = url->port, .path = url->path},
                         .playout = {.start_buffer = std::chrono::milliseconds(o.jitter_ms)},
                         .timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000))};
    auto ready = probe_server(request.connection);
    if (!ready) return report_error(make_error(error_kind::unavailable, o.url + ": " + ready.err().message));
    const auto engine = fetch_engine_identity(*address, url->port);

    std::printf("megatts bench load: %s (%s, model %s%s, %s); %s, %zu sentences, jitter buffer %d ms, %.0f s per "
                "rate, seed %llu%s\n",
                o.url.c_str(), ready->server.c_str(), ready->model.c_str(), ready->synthetic ? ", synthetic" : "",
                engine ? (engine->backend + " backend on " + engine->device).c_str() : "engine not published",
                o.format.c_str(), sentences->size(), o.jitter_ms, o.duration_s, static_cast<unsigned long long>(o.seed),
                o.frames_at_pace ? ", frames at a speaker's pace" : "");
    print_rate_header();
    nlohmann::json rates = nlohmann::json::array();
    for (std::size_t k = 0; k < o.rates.size(); ++k) {
        rate_settings settings{.rate = o.rates[k],
                               .duration_s = o.duration_s,
                               .seed = o.seed + k,  // each rate its own traffic, reproducible
                               .sampling_seeds = o.sampling_seeds,
                               .sentences = *sentences,
                               .frames_at_pace = o.frames_at_pace,
                               .request = request};
        auto run = run_rate(settings);
        if (!run) return report_error(run.err());
        const auto summary = summarize(settings, *run);
        print_rate(summary);
        std::fflush(stdout);
        auto j = rate_json(summary);
        if (o.record_requests) j["records"] = outcomes_json(run->outcomes);
        rates.push_back(std::move(j));
    }
    if (!o.json_out.empty()) {
        // The server's device, not this machine's (the same host on loopback, but its GPU did the work).
        const auto e = engine.value_or(unpublished_engine());
        nlohmann::json doc{{"bench", "load"},
                           {"date", today()},
                           {"commit", MEGATTS_GIT_COMMIT},
                           {"device", e.device},
                           {"driver_cuda", e.driver},
                           {"runtime_cuda", e.runtime},
                           {"load_generator_cpu", host_cpu()},
                           {"server",
                            {{"name", ready->server},
                             {"model", ready->model},
                             {"synthetic", ready->synthetic},
                             {"backend", e.backend}}},
                           {"url", o.url},
                           {"seed", o.seed},
                           {"duration_s", o.duration_s},
                           {"format", o.format},
                           {"languages", o.languages},
                           {"jitter_buffer_ms", o.jitter_ms},
                           {"greedy", o.greedy},
                           {"frames_at_pace", o.frames_at_pace},
                           {"sampling_seeds", o.sampling_seeds},
                           {"rates", rates}};
        if (o.record_requests) {  // what the requests' sentence indices refer to
            doc["sentences"] = nlohmann::json::array();
            for (const auto& s : *sentences) doc["sentences"].push_back({{"language", s.language}, {"text", s.text}});
        }
        std::ofstream out(o.json_out);
        out << doc.dump(2) << "\n";
        if (!out) return report_error(make_error(error_kind::io, "--json " + o.json_out + ": cannot write"));
    }
    return exit_ok;
}

}  // namespace

void add_bench_load_command(CLI::App& bench, int& exit_code) {
    auto o = std::make_shared<load_options>();
    auto* load = bench.add_subcommand("load", "Open-loop load against a running server: TTFA, underruns, throughput");
    load->add_option("--url", o->url, "The server's WebSocket endpoint")->capture_default_str();
    load->add_option("--rate", o->rates, "Requests per second (Poisson arrivals); one run per rate")->required();
    load->add_option("--duration", o->duration_s, "Seconds of arrivals per rate")->capture_default_str()
        ->check(CLI::PositiveNumber);
    load->add_option("--seed", o->seed, "Seed of the arrivals and sentence choice")->capture_default_str();
    load->add_option("--format", o->format, "Audio format asked for")->capture_default_str()
        ->check(CLI::IsMember({"opus", "pcm16"}));
    load->add_option("--voice", o->voice, "Voice (default: the server's)");
    load->add_option("--languages", o->languages, "Sentence languages to draw from")->capture_default_str();
    load->add_option("--jitter-ms", o->jitter_ms, "Client jitter buffer before playback starts")->capture_default_str()
        ->check(CLI::Range(0, 10000));
    load->add_option("--timeout", o->timeout_s, "Seconds one request may take")->capture_default_str()
        ->check(CLI::PositiveNumber);
    load->add_option("--sampling-seeds", o->sampling_seeds,
                     "Distinct sampling seeds to draw from (0: a new one per request)")->capture_default_str();
    load->add_flag("--greedy", o->greedy, "Greedy decoding instead of sampling");
    load->add_flag("--frames-at-pace", o->frames_at_pace,
                   "Ask each request to stop at its sentence's length at a speaker's pace (2.5 English words or 4 "
                   "Chinese characters a second): for a checkpoint of random weights, whose EOS comes at random");
    load->add_option("--json", o->json_out, "Also write the record as JSON here");
    load->add_flag("--record-requests", o->record_requests, "Put every request's outcome in the JSON");
    load->callback([o, &exit_code] { exit_code = run_bench_load(*o); });
}

}  // namespace megatts

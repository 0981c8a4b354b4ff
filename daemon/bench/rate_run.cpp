#include "daemon/bench/rate_run.h"

#include <cmath>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/client/http_client.h"

namespace megatts::bench {
namespace {

using clock = std::chrono::steady_clock;
namespace net = boost::asio;

// A request may start a little after its planned time (the thread is busy); the run begins
// this long after setup so the first arrivals are not late by construction.
constexpr std::chrono::milliseconds start_delay{50};
constexpr std::chrono::seconds metrics_deadline{5};
constexpr double k_frames_per_second = 12.5;  // the 12 Hz models' 80 ms frames

bool polled_series(const metric_sample& s) {
    if (s.name.ends_with("_bucket") || s.name.ends_with("_sum") || s.name.ends_with("_count")) return false;
    // The engine's batch and active set, and the sessions backpressure holds out of its steps.
    return s.name.find("batch") != std::string::npos || s.name == "megatts_engine_active_utterances" ||
           s.name == "megatts_stalled_sessions";
}

std::string series_key(const metric_sample& s) { return s.labels.empty() ? s.name : s.name + "{" + s.labels + "}"; }

client::http_request_spec metrics_request(const request_spec& r) {
    return {.host = r.connection.host,
            .port = r.connection.port,
            .target = "/metrics",
            .deadline = std::chrono::duration_cast<std::chrono::milliseconds>(metrics_deadline)};
}

std::vector<metric_sample> fetch_metrics(const request_spec& r) {
    auto reply = client::http_fetch(metrics_request(r));
    if (!reply || reply->status != 200) return {};
    return parse_metrics_text(reply->body);
}

// The run's state, shared by its timers and requests on the one thread.
struct run_state {
    run_state(const rate_settings& s, std::vector<planned_request> p) : settings(s), plan(std::move(p)) {
        outcomes.resize(plan.size());
    }

    void schedule(std::size_t next) {
        if (next == plan.size()) return;
        arrivals.expires_at(start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(plan[next].at_s)));
        arrivals.async_wait([this, next](boost::system::error_code ec) {
            if (ec) return;
            launch(next);
            schedule(next + 1);
        });
    }

    void launch(std::size_t i) {
        request_spec spec = settings.request;
        spec.index = i;
        spec.plan = plan[i];
        const auto& sentence = settings.sentences[plan[i].sentence];
        spec.text = std::string(sentence.text);
        spec.language = std::string(sentence.language);
        if (settings.frames_at_pace) spec.max_frames = static_cast<int>(std::ceil(spoken_seconds(sentence) * k_frames_per_second));
        spec.run_start = start;
        in_flight_changed(+1);
        ++launched;
        launch_request(ioc.get_executor(), std::move(spec), [this, i](request_outcome o) {
            outcomes[i] = std::move(o);
            in_flight_changed(-1);
            if (launched == plan.size() && in_flight == 0) {
                elapsed_s = std::chrono::duration<double>(clock::now() - start).count();
                finished = true;
                polling.cancel();
            }
        });
    }

    void in_flight_changed(int delta) {
        const auto now = clock::now();
        area += in_flight * std::chrono::duration<double>(now - last_change).count();
        last_change = now;
        in_flight += delta;
        peak = std::max(peak, in_flight);
    }

    void poll() {
        polling.expires_after(settings.metrics_interval);
        polling.async_wait([this](boost::system::error_code ec) {
            if (ec || finished) return;
            client::async_http_fetch(ioc.get_executor(), metrics_request(settings.request),
                                     [this](result<client::http_reply> reply) {
                                         if (!reply || reply->status != 200) return;
                                         for (const auto& s : parse_metrics_text(reply->body))
                                             if (polled_series(s)) polled[series_key(s)].push_back(s.value);
                                     });
            poll();
        });
    }

    const rate_settings& settings;
    std::vector<planned_request> plan;
    net::io_context ioc;
    net::steady_timer arrivals{ioc};
    net::steady_timer polling{ioc};
    clock::time_point start{};
    clock::time_point last_change{};
    std::vector<request_outcome> outcomes;
    std::map<std::string, std::vector<double>> polled;
    std::size_t launched = 0;
    int in_flight = 0;
    int peak = 0;
    double area = 0;
    double elapsed_s = 0;
    bool finished = false;  // every request ended: polling stops
};

}  // namespace

result<rate_result> run_rate(const rate_settings& settings) {
    auto plan = plan_arrivals(settings.rate, settings.duration_s, settings.seed, settings.sentences.size(),
                              settings.sampling_seeds);
    if (!plan) return plan.err();
    rate_result out;
    out.metrics_before = fetch_metrics(settings.request);

    auto state = std::make_unique<run_state>(settings, std::move(*plan));
    state->start = clock::now() + start_delay;
    state->last_change = state->start;
    if (state->plan.empty()) {
        state->elapsed_s = settings.duration_s;
    } else {
        state->schedule(0);
        state->poll();
        state->ioc.run();
    }
    out.outcomes = std::move(state->outcomes);
    out.elapsed_s = state->elapsed_s;
    out.peak_in_flight = state->peak;
    out.mean_in_flight = state->elapsed_s > 0 ? state->area / state->elapsed_s : 0;
    out.polled = std::move(state->polled);
    out.metrics_after = fetch_metrics(settings.request);
    return out;
}

}  // namespace megatts::bench

// soak: `megatts serve` on the CPU backend with the embedded tiny default model, loaded by
// `megatts bench load` (open loop, English and Chinese sentences, PCM16, every client playing
// its audio out in real time) at a rate the 2-core CI machine serves in real time, twice with
// the same traffic (the same seed): a warm-up pass, then the measured pass. Checks:
//   - real time held: every request of both passes completed, no simulated playback underran;
//   - audio complete: every request's sample count equals `megatts say` for its text and seed;
//   - memory flat after warm-up: the server's RSS once idle after the second pass is within a
//     small bound of its RSS once idle after the first. The same traffic reaches the same
//     concurrency, so the allocator's high-water mark is the same; what grows with the number
//     of requests served (a leak, a table never pruned) shows as the difference. RSS is also
//     sampled every second and written to WORK/rss.csv;
//   - nothing leaked: after each pass every live-work gauge of /metrics is back to 0 and the
//     server's file descriptors are back to their count before the load.
// Prints the figures: sessions in flight (peak, mean), TTFA percentiles, audio s per s, RSS.
//
// Environment (set by meson): MEGATTS_BIN, MEGATTS_WORK_DIR; MEGATTS_SOAK_RATE and
// MEGATTS_SOAK_SECONDS (per pass) override the load, for a longer soak by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/client/process_probe.h"
#include "tests/e2e/client/say_runner.h"
#include "tests/e2e/client/serve_fixture.h"
#include "tests/e2e/client/server_process.h"

namespace megatts::e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// What the 2-core CI machine serves in real time with room to spare (bench/RESULTS.md has the
// measurements: underruns begin near 1 request/s), and for how long each pass lasts.
constexpr double default_rate = 0.5;
constexpr double default_seconds = 30.0;
// Idle RSS may differ between the passes by this much without a leak (page-granular
// allocator arenas, timing that changes which sessions overlap).
constexpr std::int64_t rss_growth_bound_kib = 2 * 1024;

std::string env(const char* name) {
    const char* value = std::getenv(name);
    if (!value) FAIL("environment variable " << name << " is not set (run through meson test)");
    return value;
}

double env_number(const char* name, double fallback) {
    const char* value = std::getenv(name);
    return value ? std::atof(value) : fallback;
}

struct rss_sample {
    double at_s;
    std::int64_t kib;
};

class soak {
public:
    soak(serve_fixture& server, fs::path work, double rate, double seconds)
        : server_(server), work_(std::move(work)), rate_(rate), seconds_(seconds), start_(clock::now()) {}

    // One pass of the load; its bench load record. RSS is sampled meanwhile.
    nlohmann::json pass(const std::string& name) {
        const auto record = work_ / (name + ".json");
        auto load = std::async(std::launch::async, [&, binary = env("MEGATTS_BIN")] {
            return run_command(binary,
                               {"bench", "load", "--url", "ws://127.0.0.1:" + std::to_string(server_.port()) + "/v1/tts",
                                "--rate", std::to_string(rate_), "--duration", std::to_string(seconds_), "--seed", "11",
                                "--format", "pcm16", "--voice", "ryan", "--sampling-seeds", "1", "--timeout", "60",
                                "--json", record.string(), "--record-requests"},
                               std::chrono::seconds(static_cast<int>(seconds_) + 180), work_ / (name + ".log"));
        });
        while (load.wait_for(1s) == std::future_status::timeout) sample();
        auto status = load.get();
        REQUIRE(status.ok());
        REQUIRE(*status == 0);
        return nlohmann::json::parse(std::ifstream(record));
    }

    // Waits until the server is idle; checks that nothing is left and returns its RSS then.
    std::int64_t idle_rss(int fds_before) {
        auto idle = server_.wait_until_idle(15s);
        if (!idle) FAIL(idle.err().message);
        int fds_after = 0;
        for (int attempt = 0; attempt < 50; ++attempt) {
            auto fds = open_fds(server_.pid());
            REQUIRE(fds.ok());
            fds_after = *fds;
            if (fds_after <= fds_before) break;
            std::this_thread::sleep_for(100ms);
        }
        CHECK(fds_after <= fds_before);
        return sample();
    }

    void write_rss(const fs::path& csv_path) const {
        std::ofstream csv(csv_path);
        csv << "seconds,rss_kib\n";
        for (const auto& s : rss_) csv << s.at_s << "," << s.kib << "\n";
    }

private:
    std::int64_t sample() {
        auto kib = resident_kib(server_.pid());
        REQUIRE(kib.ok());
        rss_.push_back({std::chrono::duration<double>(clock::now() - start_).count(), *kib});
        return *kib;
    }

    serve_fixture& server_;
    fs::path work_;
    double rate_;
    double seconds_;
    clock::time_point start_;
    std::vector<rss_sample> rss_;
};

// Prints a pass's figures and checks that it held real time.
void check_real_time(const std::string& name, const nlohmann::json& doc, double rate, double seconds) {
    const auto& r = doc["rates"][0];
    std::printf("soak %s: %.1f requests/s for %.0f s: %d requests, %d completed, sessions in flight peak %d mean "
                "%.1f\n",
                name.c_str(), rate, seconds, r["requests"].get<int>(), r["completed"].get<int>(),
                r["peak_in_flight"].get<int>(), r["mean_in_flight"].get<double>());
    std::printf("soak %s: TTFA client p50/p95/p99 %.1f/%.1f/%.1f ms, server first_sent %.1f/%.1f/%.1f ms; %d "
                "underruns; %.2f audio s per s\n",
                name.c_str(), r["ttfa_ms"]["p50"].get<double>(), r["ttfa_ms"]["p95"].get<double>(),
                r["ttfa_ms"]["p99"].get<double>(), r["server_ttfa_ms"]["p50"].get<double>(),
                r["server_ttfa_ms"]["p95"].get<double>(), r["server_ttfa_ms"]["p99"].get<double>(),
                r["underruns"].get<int>(), r["audio_s_per_s"].get<double>());
    CHECK(r["requests"].get<int>() > 0);
    CHECK(r["completed"] == r["requests"]);
    CHECK(r["underruns"] == 0);
    for (const auto& q : r["records"]) {
        INFO(name << " request " << q["index"] << ": " << q["error"] << " " << q["error_message"]);
        CHECK(q["error"] == "");
    }
}

// Checks every request's sample count against `megatts say` for its sentence and seed.
void check_audio_complete(const std::vector<nlohmann::json>& docs, const fs::path& work) {
    std::map<std::pair<int, std::uint64_t>, std::int64_t> expected;
    for (const auto& doc : docs)
        for (const auto& q : doc["rates"][0]["records"]) expected[{q["sentence"].get<int>(), q["seed"].get<std::uint64_t>()}] = -1;
    // Two at a time: the load is over, and say is single-threaded but for its matrix products.
    const auto binary = env("MEGATTS_BIN");
    const auto& sentences = docs.front()["sentences"];
    std::vector<std::pair<const std::pair<int, std::uint64_t>, std::int64_t>*> pending;
    for (auto& entry : expected) pending.push_back(&entry);
    for (std::size_t i = 0; i < pending.size(); i += 2) {
        const std::size_t end = std::min(i + 2, pending.size());
        std::vector<std::future<result<say_output>>> runs;
        for (std::size_t j = i; j < end; ++j) {
            // Named copies, not a structured binding: clang before 16 cannot capture one.
            const int index = pending[j]->first.first;
            const std::uint64_t seed = pending[j]->first.second;
            runs.push_back(std::async(std::launch::async, [&, index, seed, text = sentences[index]["text"].get<std::string>(),
                                                           language = sentences[index]["language"].get<std::string>()] {
                return run_say(binary, {"--text", text, "--voice", "ryan", "--language", language, "--seed",
                                        std::to_string(seed)},
                               work, "say-" + std::to_string(index), 120s);
            }));
        }
        for (std::size_t j = i; j < end; ++j) {
            auto out = runs[j - i].get();
            if (!out) FAIL(out.err().message);
            pending[j]->second = static_cast<std::int64_t>(out->pcm16.size() / 2);
        }
    }
    int complete = 0, total = 0;
    for (const auto& doc : docs) {
        for (const auto& q : doc["rates"][0]["records"]) {
            const auto want = expected[{q["sentence"].get<int>(), q["seed"].get<std::uint64_t>()}];
            INFO("request " << q["index"] << " sentence " << q["sentence"]);
            CHECK(q["pcm16_samples"].get<std::int64_t>() == want);
            complete += q["pcm16_samples"].get<std::int64_t>() == want;
            ++total;
        }
    }
    std::printf("soak: %d of %d requests' audio equal in length to `megatts say` (%zu texts and seeds)\n", complete,
                total, expected.size());
}

TEST_CASE("soak: sessions in real time for a bounded time, audio complete, memory flat, nothing leaked", "[soak]") {
    const double rate = env_number("MEGATTS_SOAK_RATE", default_rate);
    const double seconds = env_number("MEGATTS_SOAK_SECONDS", default_seconds);
    const auto work = fs::path(env("MEGATTS_WORK_DIR")) / "soak";
    fs::remove_all(work);
    auto started = serve_fixture::start(work, env("MEGATTS_BIN"), R"([server]
listen = "127.0.0.1:0"
threads = 2
max_sessions = 64
)",
                                        {}, 60s);
    if (!started) FAIL(started.err().message);
    auto& server = **started;
    const auto fds_before = open_fds(server.pid());
    REQUIRE(fds_before.ok());

    soak s(server, work, rate, seconds);
    const auto warm_up = s.pass("warm-up");
    const auto rss_warm = s.idle_rss(*fds_before);
    const auto measured = s.pass("measured");
    const auto rss_after = s.idle_rss(*fds_before);
    s.write_rss(work / "rss.csv");

    check_real_time("warm-up", warm_up, rate, seconds);
    check_real_time("measured", measured, rate, seconds);
    check_audio_complete({warm_up, measured}, work);

    const auto requests = measured["rates"][0]["requests"].get<int>();
    std::printf("soak: server RSS idle after the warm-up pass %lld KiB, after the measured pass %lld KiB: %+lld KiB "
                "over %d requests (bound %lld KiB)\n",
                static_cast<long long>(rss_warm), static_cast<long long>(rss_after),
                static_cast<long long>(rss_after - rss_warm), requests, static_cast<long long>(rss_growth_bound_kib));
    CHECK(rss_after - rss_warm < rss_growth_bound_kib);

    auto exit = server.process().stop(30s);
    REQUIRE(exit.ok());
    CHECK(*exit == 0);
}

}  // namespace
}  // namespace megatts::e2e

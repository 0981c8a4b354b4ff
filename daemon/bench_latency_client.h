// bench_latency_client: the WebSocket client of `megatts bench latency`: one connection to
// WS /v1/tts (PROTOCOL.md), over which it speaks utterances one after another and times each:
// the client's TTFA (first text sent -> first audio message read), and what the server
// reported (the metrics event's marks and server TTFA, the done event's frames, audio and rtf).
//
// Contract: connect() retries the upgrade until `timeout` (a daemon still loading refuses it
// with 503) and reads the ready event. speak() sends the utterance (whole: one start with the
// text and end; words: a start without text, then one text message per chunk, the last with
// end, all back to back as a streaming client sends them) and reads until its done event.
// Every operation is bounded by the timeout given; an error event, an early close or a
// timeout is an error naming it. One thread; blocking.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

struct latency_sample {
    double client_ttfa_ms = 0;
    double server_ttfa_ms = 0;
    std::vector<std::pair<std::string, double>> marks;  // name, ms after received, in pipeline order
    int frames = 0;
    double audio_ms = 0;
    double rtf = 0;  // server compute / audio
    std::string layout;
};

struct ready_info {
    std::string model;
    bool synthetic = false;
};

class bench_latency_client {
public:
    static result<std::unique_ptr<bench_latency_client>> connect(const std::string& host, std::uint16_t port,
                                                                 const std::string& path,
                                                                 std::chrono::seconds timeout);
    ~bench_latency_client();
    bench_latency_client(const bench_latency_client&) = delete;
    bench_latency_client& operator=(const bench_latency_client&) = delete;

    const ready_info& ready() const;
    // `chunks`: the text in the pieces it is sent in; one piece and whole = true: the whole text.
    result<latency_sample> speak(const std::vector<std::string>& chunks, bool whole, const std::string& voice,
                                 std::uint64_t seed, std::chrono::seconds timeout);

    struct impl;

private:
    explicit bench_latency_client(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace megatts

// tts_probe: speak one text through a running `megatts serve` and print its time to first
// audio, stage by stage (the metrics event's marks), as the client saw it, and the done event.
// A manual tool; the same client (daemon/client) as the e2e tests and `megatts bench load`.
//
// Usage: tts_probe PORT [TEXT] [--words] [--pcm16]   (--words: send the text word by word)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "daemon/client/tts_client.h"
#include "daemon/client/utterance_reader.h"

int main(int argc, char** argv) {
    using namespace megatts;
    using namespace megatts::client;
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PORT [TEXT] [--words] [--pcm16]\n", argv[0]);
        return 2;
    }
    std::string text = "Hello there, how are you today?";
    bool words = false;
    bool pcm16 = false;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--words") == 0) words = true;
        else if (std::strcmp(argv[i], "--pcm16") == 0) pcm16 = true;
        else text = argv[i];
    }
    char* end = nullptr;
    const long port = std::strtol(argv[1], &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) {
        std::fprintf(stderr, "%s: PORT must be a number in 1..65535, not '%s'\n", argv[0], argv[1]);
        return 2;
    }
    auto client = tts_client::connect({.port = static_cast<std::uint16_t>(port)});
    if (!client) {
        std::fprintf(stderr, "%s\n", client.err().message.c_str());
        return 1;
    }
    if (auto ready = client->receive(std::chrono::seconds(10)); !ready) return 1;

    start_message start;
    start.format = pcm16 ? audio_format::pcm16 : audio_format::opus;
    if (!words) {
        start.text = text;
        start.end = true;
    }
    const auto sent_at = std::chrono::steady_clock::now();
    if (!client->send(start)) return 1;
    for (std::size_t at = 0; words && at < text.size();) {
        const auto space = text.find(' ', at);
        const auto end = space == std::string::npos ? text.size() : space + 1;
        if (!client->send(text_message{text.substr(at, end - at)})) return 1;
        at = end;
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    if (words && !client->send(end_message{})) return 1;

    auto r = receive_utterance(*client, std::chrono::seconds(120));
    if (!r) {
        std::fprintf(stderr, "%s\n", r.err().message.c_str());
        return 1;
    }
    std::printf("server TTFA breakdown (ms after `received`, and the stage's own time):\n");
    double previous = 0;
    for (const auto& [name, ms] : r->metrics ? r->metrics->marks : decltype(r->metrics->marks){}) {
        std::printf("  %-13s %8.2f  (+%.2f)\n", name.c_str(), ms, ms - previous);
        previous = ms;
    }
    std::printf("client: first audio %.2f ms after sending the start\n",
                std::chrono::duration<double, std::milli>(r->first_audio_at - sent_at).count());
    std::printf("done: %s, %s layout, %d frames, %.0f ms of audio, %lld messages, rtf %.3f\n",
                std::string(done_reason_name(r->done->reason)).c_str(),
                r->done->layout ? std::string(utterance_layout_name(*r->done->layout)).c_str() : "-", r->done->frames,
                r->done->audio_ms, static_cast<long long>(r->done->messages), r->done->rtf.value_or(0));
    return client->close() ? 0 : 1;
}

// command_bench_latency: `megatts bench latency`: one session's time to first audio and speed,
// against a running daemon (--url ws://HOST:PORT/v1/tts) or one it starts itself (--model,
// --backend, as serve; it does not pace that one, engine.lead_ms = 0, as nothing plays the
// audio and first audio is never held by the lead limit).
//
// Cases: a short and a long sentence, each sent whole (one start with the text) and word by
// word (a text message per word, back to back, as a client streaming an LLM's words sends
// them; the streaming-text layout), --runs times each, in one WebSocket session. Per case:
// server TTFA p50/p95 (first_sent - received, the metrics event), the p50 of each TTFA stage
// (each mark minus the one before), client TTFA p50/p95 (first text sent -> first audio read),
// and the generation speed p50 (audio seconds per second of engine compute: 1 / the done
// event's rtf). Prints a table; --json writes the figures with device, driver, commit and
// date (bench_record.h). Runs on the CPU backend too (its record's device is "cpu").
#pragma once

#include <CLI/CLI.hpp>

namespace megatts {

void add_bench_latency_command(CLI::App& bench, int& exit_code);

}  // namespace megatts

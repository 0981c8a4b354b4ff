// server_config: every setting of `megatts serve`, typed, with the built-in defaults.
//
// Contract: a plain value. The defaults below are the values written in the shipped
// configs/megatts.toml (a unit test holds the two equal), so `megatts serve` without --config
// behaves as with the shipped file. Units are in the member names (_ms, _s, _bytes, _bps).
// Empty paths mean "built in": model.dir the embedded default checkpoint, server.web_root the
// page that ships with this build. No validation here: config_loader checks ranges.
#pragma once

#include <string>

#include "daemon/config/listen_address.h"

namespace megatts {

struct server_section {
    listen_address listen;
    int threads = 0;  // 0: one per hardware thread
    std::string web_root;
    int max_sessions = 16;
    int drain_timeout_s = 30;
    int start_timeout_s = 600;
    std::string trace_dir;  // "": no trace files
    int trace_max_files = 1000;
    friend bool operator==(const server_section&, const server_section&) = default;
};

struct model_section {
    std::string dir;
    std::string backend = "cpu";
    std::string warmup_text = "Hello.";
    std::string vocoder_precision = "tf32";  // "tf32" or "f32" (cuda backend)
    friend bool operator==(const model_section&, const model_section&) = default;
};

struct engine_section {
    int slots = 16;
    int max_positions = 4096;
    int lead_ms = 2000;
    int first_audio_yield_ms = 500;
    int join_lead_ms = 1000;
    int max_batch = 0;  // utterances a step at most; 0: as many as the backend takes
    int choice_margin_us = 1000;  // engine_settings::choice_margin; 0: choose as the audio starts
    friend bool operator==(const engine_section&, const engine_section&) = default;
};

struct limits_section {
    int max_text_bytes = 4096;
    int max_message_bytes = 65536;
    int queued_utterances = 4;
    int input_queue_messages = 256;
    int idle_timeout_s = 300;
    int keepalive_timeout_s = 30;
    int max_errors = 100;
    friend bool operator==(const limits_section&, const limits_section&) = default;
};

struct send_queue_section {
    int soft_ms = 500;
    int hard_ms = 2000;
    int stall_timeout_ms = 10000;
    int max_events = 64;
    int socket_buffer_bytes = 65536;
    friend bool operator==(const send_queue_section&, const send_queue_section&) = default;
};

struct opus_section {
    int frame_ms = 20;
    friend bool operator==(const opus_section&, const opus_section&) = default;
};

struct log_section {
    std::string level = "info";
    friend bool operator==(const log_section&, const log_section&) = default;
};

struct server_config {
    server_section server;
    model_section model;
    engine_section engine;
    limits_section limits;
    send_queue_section send_queue;
    opus_section opus;
    log_section log;
    friend bool operator==(const server_config&, const server_config&) = default;
};

}  // namespace megatts

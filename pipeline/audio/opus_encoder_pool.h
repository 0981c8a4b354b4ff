// opus_encoder_pool: libopus encoders kept between streams. opus_encoder_create costs about
// 100 us (libopus 1.3.1 on this project's Debian machine: 43 KB of state initialised), and a
// whole-text utterance opens its Opus stream between its text's arrival and its
// tokenization, so every such utterance paid it in its time to first audio; OPUS_RESET_STATE
// on an idle encoder costs a few microseconds, and is paid when the earlier stream ends.
//
// Contract: take() hands out an idle encoder, already reset to the start of a stream, or null
// when none is idle (the caller then creates one); give_back() resets an encoder and keeps it
// while fewer than `capacity` are idle, else destroys it. Settings (bitrate, complexity,
// signal) survive a reset, so whoever takes an encoder sets them again: an encoder from the
// pool then encodes exactly as a new one (opus_packet_encoder does; its tests compare the
// packets). Thread-safe: one mutex, held for a push or a pop; the reset and the destruction
// run outside it. Encoders handed out keep the pool alive (opus_packet_encoder holds a
// shared_ptr); the destructor destroys the idle ones.
#pragma once

#include <opus/opus.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace megatts {

class opus_encoder_pool {
public:
    explicit opus_encoder_pool(std::size_t capacity);
    ~opus_encoder_pool();
    opus_encoder_pool(const opus_encoder_pool&) = delete;
    opus_encoder_pool& operator=(const opus_encoder_pool&) = delete;

    OpusEncoder* take();
    void give_back(OpusEncoder* encoder);
    std::size_t idle() const;

private:
    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::vector<OpusEncoder*> idle_;
};

}  // namespace megatts

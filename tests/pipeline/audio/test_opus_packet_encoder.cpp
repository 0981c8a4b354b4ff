#include "pipeline/audio/opus_packet_encoder.h"

#include <catch2/catch.hpp>
#include <opus/opus.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tests/pipeline/audio/test_signal.h"

namespace megatts {
namespace {

constexpr double duration_s = 1.234;
constexpr std::size_t sample_count = 29616;  // 1.234 s at 24 kHz
constexpr std::size_t vocoder_frame = 1920;   // 80 ms: what the vocoder hands over at once

struct decoder_deleter {
    void operator()(OpusDecoder* decoder) const { opus_decoder_destroy(decoder); }
};

// Decodes packets at 24 kHz, as many samples as they hold, lookahead delay included.
std::vector<float> decode(const std::vector<opus_packet>& packets, int frame_samples) {
    int status = OPUS_OK;
    std::unique_ptr<OpusDecoder, decoder_deleter> decoder(opus_decoder_create(24000, 1, &status));
    REQUIRE(status == OPUS_OK);
    std::vector<float> decoded;
    std::vector<float> frame(static_cast<std::size_t>(frame_samples));
    for (const opus_packet& packet : packets) {
        const int samples = opus_decode_float(decoder.get(), packet.data.data(),
                                              static_cast<opus_int32>(packet.data.size()),
                                              frame.data(), frame_samples, 0);
        REQUIRE(samples == frame_samples);
        decoded.insert(decoded.end(), frame.begin(), frame.end());
    }
    return decoded;
}

// Pushes `input` in vocoder-sized blocks, checking what each push returns, then flushes.
std::vector<opus_packet> encode_checked(opus_packet_encoder& encoder,
                                        const std::vector<float>& input) {
    const auto frame = static_cast<std::size_t>(encoder.frame_samples());
    std::vector<opus_packet> packets;
    for (std::size_t at = 0; at < input.size(); at += vocoder_frame) {
        const std::size_t end = std::min(at + vocoder_frame, input.size());
        auto pushed = encoder.push(std::span(input).subspan(at, end - at));
        REQUIRE(pushed.ok());
        // A packet is out as soon as its frame is complete, and not before.
        CHECK(pushed->size() == end / frame - at / frame);
        for (opus_packet& packet : *pushed) {
            CHECK(packet.first_sample == static_cast<std::int64_t>(packets.size() * frame));
            CHECK(packet.real_samples == encoder.frame_samples());
            CHECK_FALSE(packet.data.empty());
            packets.push_back(std::move(packet));
        }
    }
    auto flushed = encoder.flush();
    REQUIRE(flushed.ok());
    // Enough padding for the decoder to emit the last real sample past the lookahead.
    const std::size_t lookahead = static_cast<std::size_t>(encoder.lookahead_samples());
    const std::size_t total_frames = (input.size() + lookahead + frame - 1) / frame;
    CHECK(packets.size() + flushed->size() == total_frames);
    for (opus_packet& packet : *flushed) {
        CHECK(packet.first_sample == static_cast<std::int64_t>(packets.size() * frame));
        packets.push_back(std::move(packet));
    }
    return packets;
}

int total_real_samples(const std::vector<opus_packet>& packets) {
    int total = 0;
    for (const opus_packet& packet : packets) total += packet.real_samples;
    return total;
}

TEST_CASE("opus_packet_encoder: lookahead and pre-skip of the AUDIO application at 24 kHz") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    CHECK(encoder->frame_samples() == 480);
    // The 6.5 ms that opus_packet_encoder.h weighs against RESTRICTED_LOWDELAY.
    CHECK(encoder->lookahead_samples() == 156);
    CHECK(encoder->pre_skip() == 312);
}

TEST_CASE("opus_packet_encoder: 20 ms packets carry the signal, late by the lookahead") {
    const std::vector<float> input =
        test::tone_and_chirp_samples(24000, sample_count, duration_s);
    // The default complexity (5) and libopus's own (10) alike.
    const int complexity = GENERATE(5, 10);
    CAPTURE(complexity);
    auto encoder = opus_packet_encoder::create({.frame_ms = 20, .bitrate_bps = 32000, .complexity = complexity});
    REQUIRE(encoder.ok());
    const std::vector<opus_packet> packets = encode_checked(*encoder, input);
    CHECK(total_real_samples(packets) == static_cast<int>(sample_count));
    // 29616 = 61 * 480 + 336: the first packet of flush() holds the 336 real samples left.
    CHECK(packets[61].real_samples == 336);

    // libopus 1.3.1 in hybrid mode decodes one sample earlier than its stated lookahead (155 of
    // 156 here). That is inaudible, but the chirp's top end decorrelates within a sample, so
    // the lag is searched near the lookahead rather than assumed.
    const std::vector<float> decoded = decode(packets, 480);
    const test::alignment aligned =
        test::best_alignment(decoded, input, encoder->lookahead_samples(), 2);
    const double unaligned = test::normalized_correlation(decoded, input);
    INFO("correlation " << aligned.correlation << " at lag " << aligned.lag << ", "
                        << unaligned << " at lag 0");
    CHECK(aligned.correlation > 0.95);
    CHECK(unaligned < 0.5);
}

TEST_CASE("opus_packet_encoder: 10 ms packets keep the cadence and the signal") {
    const std::vector<float> input =
        test::tone_and_chirp_samples(24000, sample_count, duration_s);
    auto encoder = opus_packet_encoder::create({.frame_ms = 10, .bitrate_bps = 32000});
    REQUIRE(encoder.ok());
    CHECK(encoder->frame_samples() == 240);
    const std::vector<opus_packet> packets = encode_checked(*encoder, input);
    CHECK(total_real_samples(packets) == static_cast<int>(sample_count));

    const std::vector<float> decoded = decode(packets, 240);
    const test::alignment aligned =
        test::best_alignment(decoded, input, encoder->lookahead_samples(), 2);
    INFO("correlation " << aligned.correlation << " at lag " << aligned.lag);
    CHECK(aligned.correlation > 0.95);
}

TEST_CASE("opus_packet_encoder: odd block sizes give the same packet boundaries") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    const std::vector<float> input = test::sine_samples(24000, 2000, 440.0);
    std::vector<opus_packet> packets;
    std::size_t at = 0;
    for (std::size_t block : {1, 7, 472, 1, 999, 520}) {
        auto pushed = encoder->push(std::span(input).subspan(at, block));
        REQUIRE(pushed.ok());
        at += block;
        for (opus_packet& packet : *pushed) packets.push_back(std::move(packet));
        CHECK(packets.size() == at / 480);
    }
    REQUIRE(at == input.size());
    for (std::size_t i = 0; i < packets.size(); ++i) {
        CHECK(packets[i].first_sample == static_cast<std::int64_t>(480 * i));
    }
}

TEST_CASE("opus_packet_encoder: flush pads to cover the lookahead, then starts a new stream") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    const std::vector<float> input = test::sine_samples(24000, 960, 440.0);

    SECTION("a whole number of frames still needs a packet of padding") {
        auto pushed = encoder->push(input);
        REQUIRE(pushed.ok());
        CHECK(pushed->size() == 2);
        auto flushed = encoder->flush();
        REQUIRE(flushed.ok());
        REQUIRE(flushed->size() == 1);
        CHECK((*flushed)[0].first_sample == 960);
        CHECK((*flushed)[0].real_samples == 0);
    }
    SECTION("a partial frame too short for the lookahead needs two") {
        auto pushed = encoder->push(std::span(input).first(480 + 400));
        REQUIRE(pushed.ok());
        auto flushed = encoder->flush();
        REQUIRE(flushed.ok());
        REQUIRE(flushed->size() == 2);
        CHECK((*flushed)[0].real_samples == 400);
        CHECK((*flushed)[1].real_samples == 0);
        CHECK((*flushed)[1].first_sample == 960);
    }
    SECTION("an empty stream is one packet of silence") {
        auto flushed = encoder->flush();
        REQUIRE(flushed.ok());
        REQUIRE(flushed->size() == 1);
        CHECK((*flushed)[0].real_samples == 0);
    }

    auto next = encoder->push(std::span(input).first(480));
    REQUIRE(next.ok());
    REQUIRE(next->size() == 1);
    CHECK((*next)[0].first_sample == 0);
}

TEST_CASE("opus_packet_encoder: an encoder from the pool encodes as a new one, and the pool keeps its bound") {
    const std::vector<float> input = test::tone_and_chirp_samples(24000, sample_count, duration_s);
    auto fresh = opus_packet_encoder::create({});
    REQUIRE(fresh.ok());
    const std::vector<opus_packet> expected = encode_checked(*fresh, input);

    auto pool = std::make_shared<opus_encoder_pool>(1);
    {
        // An earlier stream with other settings, cut off mid-stream: what the pooled encoder
        // carries over is a reset state and those settings, which create() sets again.
        auto earlier = opus_packet_encoder::create({.frame_ms = 10, .bitrate_bps = 64000, .complexity = 10}, pool);
        REQUIRE(earlier.ok());
        REQUIRE(earlier->push(std::span(input).first(5000)).ok());
    }
    REQUIRE(pool->idle() == 1);
    auto reused = opus_packet_encoder::create({}, pool);
    REQUIRE(reused.ok());
    CHECK(pool->idle() == 0);
    const std::vector<opus_packet> packets = encode_checked(*reused, input);
    REQUIRE(packets.size() == expected.size());
    for (std::size_t i = 0; i < packets.size(); ++i) {
        INFO("packet " << i);
        CHECK(packets[i].data == expected[i].data);
    }

    // Two given back to a pool of one: one is kept, the other destroyed.
    auto second = opus_packet_encoder::create({}, pool);
    REQUIRE(second.ok());
    reused = std::move(second);
    CHECK(pool->idle() == 1);
    { auto discard = std::move(reused); }
    CHECK(pool->idle() == 1);
}

TEST_CASE("opus_packet_encoder: unsupported settings are refused") {
    CHECK(opus_packet_encoder::create({.frame_ms = 40}).err().kind == error_kind::invalid_input);
    CHECK(opus_packet_encoder::create({.frame_ms = 5}).err().kind == error_kind::invalid_input);
    CHECK(opus_packet_encoder::create({.bitrate_bps = 5999}).err().kind ==
          error_kind::invalid_input);
    CHECK(opus_packet_encoder::create({.bitrate_bps = 510001}).err().kind ==
          error_kind::invalid_input);
    CHECK(opus_packet_encoder::create({.frame_ms = 10, .bitrate_bps = 6000}).ok());
    CHECK(opus_packet_encoder::create({.complexity = -1}).err().kind == error_kind::invalid_input);
    CHECK(opus_packet_encoder::create({.complexity = 11}).err().kind == error_kind::invalid_input);
}

}  // namespace
}  // namespace megatts

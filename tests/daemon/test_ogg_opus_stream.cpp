#include "daemon/http/ogg_opus_stream.h"

#include <catch2/catch.hpp>

#include <opus/opusfile.h>

#include <cmath>
#include <vector>

#include "pipeline/audio/opus_packet_encoder.h"

namespace megatts {
namespace {

// Encodes `samples` samples of a tone the way the session does (push, then flush), writes the
// packets one by one through ogg_opus_stream, and returns the 48 kHz length opusfile reads.
ogg_int64_t round_trip(int samples, int frame_ms) {
    auto encoder = opus_packet_encoder::create({.frame_ms = frame_ms});
    REQUIRE(encoder.ok());
    std::vector<float> tone(static_cast<std::size_t>(samples));
    for (std::size_t i = 0; i < tone.size(); ++i) tone[i] = 0.3f * std::sin(0.05f * static_cast<float>(i));
    auto packets = encoder->push(tone);
    REQUIRE(packets.ok());
    auto tail = encoder->flush();
    REQUIRE(tail.ok());
    packets->insert(packets->end(), tail->begin(), tail->end());

    auto stream = ogg_opus_stream::create(encoder->pre_skip(), encoder->frame_samples(), 0);
    REQUIRE(stream.ok());
    std::vector<unsigned char> ogg;
    for (std::size_t i = 0; i < packets->size(); ++i) {
        const auto& p = (*packets)[i];
        CHECK_FALSE(stream->finished());
        auto bytes = stream->push(p.data, p.first_sample, p.real_samples);
        REQUIRE(bytes.ok());
        CHECK_FALSE(bytes->empty());  // page duration 0: every packet leaves at once
        ogg.insert(ogg.end(), bytes->begin(), bytes->end());
        CHECK(stream->finished() == (i + 1 == packets->size()));
    }
    int err = 0;
    OggOpusFile* file = op_open_memory(ogg.data(), ogg.size(), &err);
    REQUIRE(file != nullptr);
    const auto total = op_pcm_total(file, -1);
    op_free(file);
    return total;
}

TEST_CASE("the stream ends on the encoder's last packet, and decodes to exactly the input", "[ogg]") {
    for (const int frame_ms : {20, 10}) {
        INFO("frame " << frame_ms << " ms");
        CHECK(round_trip(1920 * 3, frame_ms) == 2 * 1920 * 3);  // whole frames: a 0-sample flush packet
        CHECK(round_trip(1920 * 3 + 100, frame_ms) == 2 * (1920 * 3 + 100));
        CHECK(round_trip(400, frame_ms) == 800);  // shorter than one packet
    }
}

TEST_CASE("a packet after the end is refused", "[ogg]") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    auto packets = encoder->push(std::vector<float>(480, 0.1f));
    REQUIRE(packets.ok());
    auto tail = encoder->flush();
    REQUIRE(tail.ok());
    packets->insert(packets->end(), tail->begin(), tail->end());
    auto stream = ogg_opus_stream::create(encoder->pre_skip(), encoder->frame_samples(), 80);
    REQUIRE(stream.ok());
    for (const auto& p : *packets) REQUIRE(stream->push(p.data, p.first_sample, p.real_samples).ok());
    CHECK(stream->finished());
    const auto& last = packets->back();
    CHECK_FALSE(stream->push(last.data, last.first_sample + 480, 0).ok());
}

}  // namespace
}  // namespace megatts

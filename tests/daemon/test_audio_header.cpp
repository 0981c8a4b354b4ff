#include "daemon/protocol/audio_header.h"

#include <catch2/catch.hpp>

#include <vector>

namespace megatts {
namespace {

TEST_CASE("the audio header is 16 little-endian bytes in the order of PROTOCOL.md §5", "[protocol]") {
    const audio_header header{.kind = audio_kind::opus,
                              .flags = audio_flag::first | audio_flag::last,
                              .context = 0x04030201,
                              .sequence = 0x08070605,
                              .timestamp = 0x0C0B0A09};
    const std::vector<std::uint8_t> payload = {0xAA, 0xBB, 0xCC};
    const auto message = encode_audio_message(header, payload);
    const std::vector<std::uint8_t> expected = {
        0x01,                    // version
        0x01,                    // kind: Opus
        0x03, 0x00,              // flags: first | last
        0x01, 0x02, 0x03, 0x04,  // context
        0x05, 0x06, 0x07, 0x08,  // sequence
        0x09, 0x0A, 0x0B, 0x0C,  // timestamp
        0xAA, 0xBB, 0xCC,        // payload
    };
    CHECK(message == expected);
}

TEST_CASE("the protocol's worked example encodes as written", "[protocol]") {
    const auto message = encode_audio_message({.kind = audio_kind::opus, .context = 7, .sequence = 2, .timestamp = 1920}, {});
    const std::vector<std::uint8_t> expected = {0x01, 0x01, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
                                                0x02, 0x00, 0x00, 0x00, 0x80, 0x07, 0x00, 0x00};
    CHECK(message == expected);
}

TEST_CASE("PCM16 kind and each flag bit sit where the protocol says", "[protocol]") {
    const auto pcm = encode_audio_message({.kind = audio_kind::pcm16, .flags = audio_flag::last}, {});
    CHECK(pcm[1] == 2);
    CHECK(pcm[2] == 0x02);
    CHECK(pcm[3] == 0x00);
    const auto first = encode_audio_message({.flags = audio_flag::first}, {});
    CHECK(first[2] == 0x01);
}

TEST_CASE("decoding gives back the header, ignoring reserved flag bits", "[protocol]") {
    const audio_header header{.kind = audio_kind::pcm16, .flags = audio_flag::first, .context = 42, .sequence = 9,
                              .timestamp = 0xFFFFFFFF};
    auto message = encode_audio_message(header, std::vector<std::uint8_t>(10, 0));
    auto decoded = decode_audio_header(message);
    REQUIRE(decoded.ok());
    CHECK(*decoded == header);

    message[3] = 0x80;  // a reserved bit a later version might set
    decoded = decode_audio_header(message);
    REQUIRE(decoded.ok());
    CHECK(decoded->flags == audio_flag::first);
}

TEST_CASE("decoding refuses short messages, other versions and unknown kinds", "[protocol]") {
    auto message = encode_audio_message({}, {});
    CHECK_FALSE(decode_audio_header(std::span(message).first(15)).ok());
    auto other_version = message;
    other_version[0] = 2;
    CHECK_FALSE(decode_audio_header(other_version).ok());
    auto other_kind = message;
    other_kind[1] = 3;
    CHECK_FALSE(decode_audio_header(other_kind).ok());
}

}  // namespace
}  // namespace megatts

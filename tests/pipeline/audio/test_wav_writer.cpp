#include "pipeline/audio/wav_writer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace megatts {
namespace {

std::uint32_t read_le32(const std::vector<std::uint8_t>& bytes, std::size_t at) {
    return bytes.at(at) | bytes.at(at + 1) << 8 | bytes.at(at + 2) << 16 |
           static_cast<std::uint32_t>(bytes.at(at + 3)) << 24;
}

std::uint16_t read_le16(const std::vector<std::uint8_t>& bytes, std::size_t at) {
    return static_cast<std::uint16_t>(bytes.at(at) | bytes.at(at + 1) << 8);
}

std::string read_tag(const std::vector<std::uint8_t>& bytes, std::size_t at) {
    return {bytes.begin() + static_cast<std::ptrdiff_t>(at),
            bytes.begin() + static_cast<std::ptrdiff_t>(at + 4)};
}

// A WAV file parsed the way a reader walks it: the RIFF header, then chunk by chunk.
struct parsed_wav {
    std::uint32_t riff_size = 0;
    std::vector<std::string> chunk_order;
    std::map<std::string, std::uint32_t> chunk_size;
    std::map<std::string, std::size_t> chunk_offset;  // of the chunk's payload
};

parsed_wav parse_wav(const std::vector<std::uint8_t>& bytes) {
    REQUIRE(read_tag(bytes, 0) == "RIFF");
    REQUIRE(read_tag(bytes, 8) == "WAVE");
    parsed_wav wav;
    wav.riff_size = read_le32(bytes, 4);
    std::size_t at = 12;
    while (at + 8 <= bytes.size()) {
        const std::string tag = read_tag(bytes, at);
        const std::uint32_t size = read_le32(bytes, at + 4);
        wav.chunk_order.push_back(tag);
        wav.chunk_size[tag] = size;
        wav.chunk_offset[tag] = at + 8;
        if (tag == "data") break;  // its size may be the unknown-length marker
        at += 8 + size + (size & 1);
    }
    return wav;
}

std::vector<std::int16_t> pcm16_samples(const std::vector<float>& samples) {
    auto wav = encode_wav(samples, 24000, wav_sample_format::pcm16);
    REQUIRE(wav.ok());
    const std::size_t data = parse_wav(*wav).chunk_offset.at("data");
    std::vector<std::int16_t> out;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        out.push_back(std::bit_cast<std::int16_t>(read_le16(*wav, data + 2 * i)));
    }
    return out;
}

TEST_CASE("wav_writer: pcm16 file has a canonical 44-byte header and LE samples") {
    const std::vector<float> samples = {0.0f, 0.25f, -0.25f, 0.999f};
    auto wav = encode_wav(samples, 16000, wav_sample_format::pcm16);
    REQUIRE(wav.ok());
    REQUIRE(wav->size() == 44 + 2 * samples.size());

    const parsed_wav parsed = parse_wav(*wav);
    CHECK(parsed.riff_size == wav->size() - 8);
    CHECK(parsed.chunk_order == std::vector<std::string>{"fmt ", "data"});
    const std::size_t fmt = parsed.chunk_offset.at("fmt ");
    CHECK(parsed.chunk_size.at("fmt ") == 16);
    CHECK(read_le16(*wav, fmt) == 1);            // WAVE_FORMAT_PCM
    CHECK(read_le16(*wav, fmt + 2) == 1);        // channels
    CHECK(read_le32(*wav, fmt + 4) == 16000);    // sample rate
    CHECK(read_le32(*wav, fmt + 8) == 32000);    // byte rate
    CHECK(read_le16(*wav, fmt + 12) == 2);       // block align
    CHECK(read_le16(*wav, fmt + 14) == 16);      // bits per sample
    CHECK(parsed.chunk_size.at("data") == 2 * samples.size());
    CHECK(parsed.chunk_offset.at("data") == 44);
    CHECK(pcm16_samples(samples) == std::vector<std::int16_t>{0, 8192, -8192, 32734});
}

TEST_CASE("wav_writer: pcm16 rounds to nearest and clips") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> samples = {1000.4f / 32767, 1000.6f / 32767, -1000.4f / 32767,
                                        -1000.6f / 32767, 0.5f, -0.5f, 1.0f, -1.0f,
                                        1.5f, -7.0f, inf, -inf, nan};
    CHECK(pcm16_samples(samples) ==
          std::vector<std::int16_t>{1000, 1001, -1000, -1001, 16384, -16384, 32767, -32767,
                                    32767, -32767, 32767, -32767, 0});
}

TEST_CASE("wav_writer: every pcm16 value but -32768 survives a trip through float") {
    std::vector<float> samples;
    for (int value = -32767; value <= 32767; ++value) samples.push_back(value / 32767.0f);
    const std::vector<std::int16_t> back = pcm16_samples(samples);
    for (int value = -32767; value <= 32767; ++value) {
        if (back[static_cast<std::size_t>(value + 32767)] != value) FAIL("lost " << value);
    }
}

TEST_CASE("wav_writer: float32 file has the extended fmt chunk, a fact chunk and exact samples") {
    const std::vector<float> samples = {0.0f, 0.123456789f, -1.0f, 1.5f, -3.25f};
    auto wav = encode_wav(samples, 24000, wav_sample_format::float32);
    REQUIRE(wav.ok());
    REQUIRE(wav->size() == 58 + 4 * samples.size());

    const parsed_wav parsed = parse_wav(*wav);
    CHECK(parsed.riff_size == wav->size() - 8);
    CHECK(parsed.chunk_order == std::vector<std::string>{"fmt ", "fact", "data"});
    const std::size_t fmt = parsed.chunk_offset.at("fmt ");
    CHECK(parsed.chunk_size.at("fmt ") == 18);
    CHECK(read_le16(*wav, fmt) == 3);            // WAVE_FORMAT_IEEE_FLOAT
    CHECK(read_le16(*wav, fmt + 2) == 1);
    CHECK(read_le32(*wav, fmt + 4) == 24000);
    CHECK(read_le32(*wav, fmt + 8) == 96000);
    CHECK(read_le16(*wav, fmt + 12) == 4);
    CHECK(read_le16(*wav, fmt + 14) == 32);
    CHECK(read_le16(*wav, fmt + 16) == 0);       // cbSize
    CHECK(parsed.chunk_size.at("fact") == 4);
    CHECK(read_le32(*wav, parsed.chunk_offset.at("fact")) == samples.size());
    CHECK(parsed.chunk_size.at("data") == 4 * samples.size());

    const std::size_t data = parsed.chunk_offset.at("data");
    for (std::size_t i = 0; i < samples.size(); ++i) {
        CHECK(std::bit_cast<float>(read_le32(*wav, data + 4 * i)) == samples[i]);
    }
}

TEST_CASE("wav_writer: a streaming header marks every size unknown") {
    const std::vector<float> samples = {0.1f, -0.2f, 0.3f};
    for (const auto format : {wav_sample_format::pcm16, wav_sample_format::float32}) {
        auto header = wav_header(24000, format, std::nullopt);
        REQUIRE(header.ok());
        const parsed_wav parsed = parse_wav(*header);
        CHECK(parsed.riff_size == wav_unknown_size);
        CHECK(parsed.chunk_size.at("data") == wav_unknown_size);
        if (format == wav_sample_format::float32) {
            CHECK(read_le32(*header, parsed.chunk_offset.at("fact")) == wav_unknown_size);
        }
        CHECK(parsed.chunk_offset.at("data") == header->size());

        // Blocks appended after the header are the data of the file of the same samples.
        std::vector<std::uint8_t> stream = *header;
        append_wav_samples(std::span(samples).first(1), format, stream);
        append_wav_samples(std::span(samples).subspan(1), format, stream);
        auto file = encode_wav(samples, 24000, format);
        REQUIRE(file.ok());
        REQUIRE(stream.size() == file->size());
        const auto data = static_cast<std::ptrdiff_t>(header->size());
        CHECK(std::equal(stream.begin() + data, stream.end(), file->begin() + data));
    }
}

TEST_CASE("wav_writer: rates and lengths the header cannot hold are refused") {
    CHECK(wav_header(0, wav_sample_format::pcm16, 1).err().kind == error_kind::invalid_input);
    CHECK(wav_header(-8000, wav_sample_format::pcm16, 1).err().kind == error_kind::invalid_input);
    CHECK(wav_header(std::numeric_limits<int>::max(), wav_sample_format::float32, 1).err().kind ==
          error_kind::invalid_input);
    // 2^30 float samples are 4 GiB of data, past what a 32-bit RIFF size can count.
    CHECK(wav_header(24000, wav_sample_format::float32, std::size_t{1} << 30).err().kind ==
          error_kind::invalid_input);
    CHECK(wav_header(24000, wav_sample_format::pcm16, std::size_t{1} << 30).ok());
}

TEST_CASE("wav_writer: write_wav_file writes the encoded bytes and reports I/O errors") {
    const std::vector<float> samples = {0.5f, -0.5f};
    const auto dir = std::filesystem::temp_directory_path() / "megatts_test_wav_writer";
    std::filesystem::create_directories(dir);
    const auto path = dir / "out.wav";
    REQUIRE(write_wav_file(path, samples, 24000, wav_sample_format::pcm16).ok());

    std::ifstream file(path, std::ios::binary);
    const std::vector<std::uint8_t> written{std::istreambuf_iterator<char>(file), {}};
    CHECK(written == *encode_wav(samples, 24000, wav_sample_format::pcm16));
    std::filesystem::remove_all(dir);

    auto missing_dir = write_wav_file(dir / "no" / "such.wav", samples, 24000,
                                      wav_sample_format::pcm16);
    REQUIRE_FALSE(missing_dir.ok());
    CHECK(missing_dir.err().kind == error_kind::io);
    CHECK(missing_dir.err().message.find("such.wav") != std::string::npos);
}

}  // namespace
}  // namespace megatts

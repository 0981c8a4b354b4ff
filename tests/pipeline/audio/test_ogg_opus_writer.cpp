#include "pipeline/audio/ogg_opus_writer.h"

#include <catch2/catch.hpp>
#include <ogg/ogg.h>
#include <opus/opusfile.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/audio/ogg_opus_file.h"
#include "pipeline/audio/opus_packet_encoder.h"
#include "tests/pipeline/audio/test_signal.h"

namespace megatts {
namespace {

constexpr double duration_s = 1.234;
constexpr std::size_t sample_count = 29616;  // 1.234 s at 24 kHz
constexpr std::size_t vocoder_frame = 1920;

struct page_info {
    bool bos = false;
    bool eos = false;
    std::int64_t granule = 0;
    int packets_completed = 0;
    std::string body_start;  // first 8 body bytes: the header magic on header pages
};

// Splits a byte stream into Ogg pages with libogg's reader, which also checks each CRC.
std::vector<page_info> parse_pages(const std::vector<std::uint8_t>& bytes) {
    ogg_sync_state sync;
    ogg_sync_init(&sync);
    char* buffer = ogg_sync_buffer(&sync, static_cast<long>(bytes.size()));
    std::copy(bytes.begin(), bytes.end(), buffer);
    ogg_sync_wrote(&sync, static_cast<long>(bytes.size()));
    std::vector<page_info> pages;
    ogg_page page;
    int status = 0;
    while ((status = ogg_sync_pageout(&sync, &page)) != 0) {
        REQUIRE(status == 1);  // -1 would be a gap or a bad checksum
        const auto body = reinterpret_cast<const char*>(page.body);
        pages.push_back({ogg_page_bos(&page) != 0, ogg_page_eos(&page) != 0,
                         ogg_page_granulepos(&page), ogg_page_packets(&page),
                         std::string(body, body + std::min<long>(8, page.body_len))});
    }
    ogg_sync_clear(&sync);
    return pages;
}

struct opus_file_closer {
    void operator()(OggOpusFile* file) const { op_free(file); }
};

// Decodes a whole Ogg Opus stream with opusfile, the way a player would.
struct decoded_stream {
    int channels = 0;
    std::int64_t pcm_total = 0;
    int pre_skip = 0;
    std::uint32_t input_sample_rate = 0;
    std::string vendor;
    std::vector<float> samples;  // 48 kHz
};

decoded_stream decode_stream(const std::vector<std::uint8_t>& bytes) {
    int status = 0;
    std::unique_ptr<OggOpusFile, opus_file_closer> file(
        op_open_memory(bytes.data(), bytes.size(), &status));
    REQUIRE(status == 0);
    REQUIRE(file);
    decoded_stream out;
    out.channels = op_channel_count(file.get(), -1);
    out.pcm_total = op_pcm_total(file.get(), -1);
    const OpusHead* head = op_head(file.get(), -1);
    REQUIRE(head);
    CHECK(head->version == 1);
    CHECK(head->output_gain == 0);
    CHECK(head->mapping_family == 0);
    out.pre_skip = static_cast<int>(head->pre_skip);
    out.input_sample_rate = head->input_sample_rate;
    out.vendor = op_tags(file.get(), -1)->vendor;
    std::vector<float> buffer(5760);
    while (true) {
        const int read = op_read_float(file.get(), buffer.data(), static_cast<int>(buffer.size()),
                                       nullptr);
        REQUIRE(read >= 0);
        if (read == 0) break;
        out.samples.insert(out.samples.end(), buffer.begin(), buffer.begin() + read);
    }
    return out;
}

// Encodes `input` as the live path does: vocoder-sized pushes, bytes out after each append.
std::vector<std::uint8_t> stream_utterance(const std::vector<float>& input,
                                           const ogg_opus_writer_config& config,
                                           std::vector<std::size_t>* output_sizes = nullptr) {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    auto writer = ogg_opus_writer::create(encoder->pre_skip(), config);
    REQUIRE(writer.ok());
    std::vector<std::uint8_t> stream;
    for (std::size_t at = 0; at < input.size(); at += vocoder_frame) {
        const std::size_t block = std::min(vocoder_frame, input.size() - at);
        auto packets = encoder->push(std::span(input).subspan(at, block));
        REQUIRE(packets.ok());
        auto bytes = writer->append(*packets);
        REQUIRE(bytes.ok());
        if (output_sizes) output_sizes->push_back(bytes->size());
        stream.insert(stream.end(), bytes->begin(), bytes->end());
    }
    auto final_packets = encoder->flush();
    REQUIRE(final_packets.ok());
    auto tail = writer->finish(*final_packets);
    REQUIRE(tail.ok());
    REQUIRE_FALSE(tail->empty());
    stream.insert(stream.end(), tail->begin(), tail->end());
    return stream;
}

TEST_CASE("ogg_opus_writer: a file decodes with opusfile to exactly twice the samples at 48 kHz") {
    const std::vector<float> input = test::tone_and_chirp_samples(24000, sample_count, duration_s);
    auto bytes = encode_ogg_opus(input);
    REQUIRE(bytes.ok());

    const decoded_stream decoded = decode_stream(*bytes);
    CHECK(decoded.channels == 1);
    CHECK(decoded.pcm_total == 2 * static_cast<std::int64_t>(sample_count));
    CHECK(decoded.pre_skip == 312);
    CHECK(decoded.input_sample_rate == 24000);
    CHECK(decoded.vendor.rfind("megatts", 0) == 0);
    REQUIRE(decoded.samples.size() == 2 * sample_count);

    // opusfile has applied the pre-skip, so the output lines up with the signal itself, to
    // within the sample that hybrid mode decodes early (two at 48 kHz).
    const std::vector<float> expected =
        test::tone_and_chirp_samples(48000, 2 * sample_count, duration_s);
    const test::alignment aligned = test::best_alignment(decoded.samples, expected, 0, 4);
    INFO("correlation " << aligned.correlation << " at lag " << aligned.lag);
    CHECK(aligned.correlation > 0.95);
}

TEST_CASE("ogg_opus_writer: header pages, granule positions and end of stream") {
    const std::vector<float> input = test::tone_and_chirp_samples(24000, sample_count, duration_s);
    const std::vector<page_info> pages = parse_pages(stream_utterance(input, {}));
    REQUIRE(pages.size() > 3);

    CHECK(pages[0].bos);
    CHECK(pages[0].body_start == "OpusHead");
    CHECK(pages[0].packets_completed == 1);
    CHECK(pages[0].granule == 0);
    CHECK_FALSE(pages[1].bos);
    CHECK(pages[1].body_start == "OpusTags");
    CHECK(pages[1].packets_completed == 1);
    CHECK(pages[1].granule == 0);

    // Default policy: one page per 80 ms vocoder block, four 20 ms packets of 960 samples at
    // 48 kHz each; the granule counts decoded samples, pre-skip included.
    const std::size_t full_blocks = sample_count / vocoder_frame;
    for (std::size_t i = 0; i < full_blocks; ++i) {
        const page_info& page = pages[2 + i];
        CHECK(page.packets_completed == 4);
        CHECK(page.granule == static_cast<std::int64_t>(3840 * (i + 1)));
        CHECK_FALSE(page.eos);
    }
    // The last block's 816 samples make one whole packet, which waits on the open page, and
    // 336 left for flush(); its packets close that page, whose granule trims the padding.
    REQUIRE(pages.size() == 2 + full_blocks + 1);
    const page_info& last = pages.back();
    CHECK(last.eos);
    CHECK(last.granule == 312 + 2 * static_cast<std::int64_t>(sample_count));
}

TEST_CASE("ogg_opus_writer: page duration 0 returns a page for every packet at once") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    auto writer = ogg_opus_writer::create(encoder->pre_skip(), {.page_duration_ms = 0});
    REQUIRE(writer.ok());
    const std::vector<float> input = test::sine_samples(24000, 480 * 5, 440.0);

    std::vector<std::uint8_t> stream;
    for (std::size_t i = 0; i < 5; ++i) {
        auto packets = encoder->push(std::span(input).subspan(480 * i, 480));
        REQUIRE(packets.ok());
        REQUIRE(packets->size() == 1);
        auto bytes = writer->append(*packets);
        REQUIRE(bytes.ok());
        const std::vector<page_info> pages = parse_pages(*bytes);
        // The header pages go out with the first audio page.
        REQUIRE(pages.size() == (i == 0 ? 3 : 1));
        CHECK(pages.back().packets_completed == 1);
        CHECK(pages.back().granule == static_cast<std::int64_t>(960 * (i + 1)));
        stream.insert(stream.end(), bytes->begin(), bytes->end());
    }
    auto final_packets = encoder->flush();
    REQUIRE(final_packets.ok());
    auto tail = writer->finish(*final_packets);
    REQUIRE(tail.ok());
    stream.insert(stream.end(), tail->begin(), tail->end());
    CHECK(decode_stream(stream).pcm_total == 2 * 480 * 5);
}

TEST_CASE("ogg_opus_writer: a streamed utterance plays back whole") {
    const std::vector<float> input = test::tone_and_chirp_samples(24000, sample_count, duration_s);
    std::vector<std::size_t> output_sizes;
    const std::vector<std::uint8_t> stream = stream_utterance(input, {}, &output_sizes);
    // Every whole 80 ms block of input releases a page right away; the short last block's
    // single packet waits for finish().
    REQUIRE(output_sizes.size() == sample_count / vocoder_frame + 1);
    for (std::size_t i = 0; i + 1 < output_sizes.size(); ++i) CHECK(output_sizes[i] > 0);
    CHECK(output_sizes.back() == 0);

    const decoded_stream decoded = decode_stream(stream);
    CHECK(decoded.pcm_total == 2 * static_cast<std::int64_t>(sample_count));
    const std::vector<float> expected =
        test::tone_and_chirp_samples(48000, 2 * sample_count, duration_s);
    REQUIRE(decoded.samples.size() == expected.size());
    CHECK(test::best_alignment(decoded.samples, expected, 0, 4).correlation > 0.95);
}

TEST_CASE("ogg_opus_writer: the decoded length is exact for every kind of ending") {
    // Empty, shorter than the lookahead, one sample, whole frames with and without room for the
    // lookahead in the last one, and a whole vocoder frame.
    for (std::size_t count : {0, 1, 100, 479, 480, 481, 960, 1000, 1920, 4321}) {
        INFO(count << " samples");
        const std::vector<float> input = test::sine_samples(24000, count, 440.0);
        auto bytes = encode_ogg_opus(input);
        REQUIRE(bytes.ok());
        const decoded_stream decoded = decode_stream(*bytes);
        CHECK(decoded.pcm_total == 2 * static_cast<std::int64_t>(count));
        CHECK(decoded.samples.size() == 2 * count);
    }
}

TEST_CASE("ogg_opus_writer: write_ogg_opus_file writes the encoded stream") {
    const std::vector<float> input = test::sine_samples(24000, 2400, 440.0);
    const auto dir = std::filesystem::temp_directory_path() / "megatts_test_ogg_opus_writer";
    std::filesystem::create_directories(dir);
    const auto path = dir / "out.opus";
    REQUIRE(write_ogg_opus_file(path, input).ok());
    std::ifstream file(path, std::ios::binary);
    const std::vector<std::uint8_t> written{std::istreambuf_iterator<char>(file), {}};
    std::filesystem::remove_all(dir);
    CHECK(decode_stream(written).pcm_total == 4800);
}

TEST_CASE("ogg_opus_writer: misuse is refused") {
    auto encoder = opus_packet_encoder::create({});
    REQUIRE(encoder.ok());
    const std::vector<float> input = test::sine_samples(24000, 960, 440.0);
    auto packets = encoder->push(input);
    REQUIRE(packets.ok());

    CHECK(ogg_opus_writer::create(-1).err().kind == error_kind::invalid_input);
    CHECK(ogg_opus_writer::create(65536).err().kind == error_kind::invalid_input);
    CHECK(ogg_opus_writer::create(312, {.page_duration_ms = 1001}).err().kind ==
          error_kind::invalid_input);

    auto writer = ogg_opus_writer::create(encoder->pre_skip());
    REQUIRE(writer.ok());
    CHECK(writer->finish({}).err().kind == error_kind::invalid_input);
    CHECK(writer->append(std::vector<opus_packet>{opus_packet{}}).err().kind ==
          error_kind::invalid_input);

    SECTION("ending without the flush packets leaves the last samples undecodable") {
        // 960 samples end exactly on a frame, so the lookahead is not covered yet.
        CHECK(writer->finish(*packets).err().kind == error_kind::invalid_input);
    }
    SECTION("nothing may follow the end of the stream") {
        auto final_packets = encoder->flush();
        REQUIRE(final_packets.ok());
        REQUIRE(writer->append(*packets).ok());
        REQUIRE(writer->finish(*final_packets).ok());
        CHECK(writer->append(*packets).err().kind == error_kind::invalid_input);
        CHECK(writer->finish(*final_packets).err().kind == error_kind::invalid_input);
    }
}

}  // namespace
}  // namespace megatts

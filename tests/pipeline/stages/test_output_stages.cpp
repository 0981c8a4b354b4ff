#include "pipeline/stages/output_stages.h"

#include <catch2/catch.hpp>
#include <opus/opus.h>

#include <cmath>
#include <memory>
#include <vector>

#include "pipeline/graph/stage_chain.h"

namespace megatts {
namespace {

constexpr int k_frame = 1920;  // 80 ms at 24 kHz: one vocoder frame

std::vector<float> tone(std::int64_t first, int n) {
    std::vector<float> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = 0.3f * std::sin(0.05f * static_cast<float>(first + i));
    return out;
}

// Pushes `frames` vocoder frames and end_of_audio through the stages for `options`.
std::vector<frame> run_output(const utterance_options& options, int frames, output_stages* made = nullptr) {
    auto stages = make_output_stages(options);
    REQUIRE(stages.ok());
    if (made) {
        made->sample_rate = stages->sample_rate;
        made->opus_pre_skip = stages->opus_pre_skip;
    }
    std::vector<frame> out;
    stage_chain chain(std::move(stages->stages), [&](frame f) { out.push_back(std::move(f)); });
    for (int i = 0; i < frames; ++i)
        chain.push(frame{{}, pcm_block{tone(std::int64_t{i} * k_frame, k_frame), 24000, std::int64_t{i} * k_frame}});
    chain.push(frame{{}, end_of_audio{}});
    return out;
}

struct decoder_deleter {
    void operator()(OpusDecoder* d) const { opus_decoder_destroy(d); }
};

TEST_CASE("Opus packets come at the frame cadence and decode back to every sample", "[stages]") {
    for (int frame_ms : {20, 10}) {
        INFO(frame_ms << " ms");
        utterance_options o;
        o.format = audio_format::opus;
        o.opus_frame_ms = frame_ms;
        output_stages made;
        auto out = run_output(o, 5, &made);
        CHECK(made.sample_rate == 24000);
        CHECK(made.opus_pre_skip > 0);
        const int frame_samples = 24000 * frame_ms / 1000;

        std::vector<opus_packet_frame> packets;
        for (auto& f : out) {
            if (auto* p = std::get_if<opus_packet_frame>(&f.payload)) packets.push_back(*p);
        }
        REQUIRE(std::holds_alternative<end_of_audio>(out.back().payload));
        // Every 80 ms frame yields 80 / frame_ms packets at once; the flush adds the lookahead's.
        const std::size_t real_packets = static_cast<std::size_t>(5 * k_frame / frame_samples);
        REQUIRE(packets.size() > real_packets);
        int real = 0;
        for (std::size_t i = 0; i < packets.size(); ++i) {
            CHECK(packets[i].frame_samples == frame_samples);
            CHECK(packets[i].packet.first_sample == static_cast<std::int64_t>(i) * frame_samples);
            if (i < real_packets) CHECK(packets[i].packet.real_samples == frame_samples);
            real += packets[i].packet.real_samples;
        }
        CHECK(real == 5 * k_frame);

        int status = 0;
        std::unique_ptr<OpusDecoder, decoder_deleter> dec(opus_decoder_create(48000, 1, &status));
        REQUIRE(status == OPUS_OK);
        std::vector<float> pcm(static_cast<std::size_t>(2 * frame_samples));
        int decoded = 0;
        for (auto& p : packets) {
            const int n = opus_decode_float(dec.get(), p.packet.data.data(), static_cast<opus_int32>(p.packet.data.size()),
                                            pcm.data(), 2 * frame_samples, 0);
            CHECK(n == 2 * frame_samples);  // decoded at 48 kHz: twice the samples
            decoded += n;
        }
        // Past the pre-skip, the decoder gives at least every real sample (at 48 kHz).
        CHECK(decoded - made.opus_pre_skip >= 2 * 5 * k_frame);
        CHECK(decoded - made.opus_pre_skip < 2 * 5 * k_frame + 2 * frame_samples);
    }
}

TEST_CASE("PCM16 at 24 kHz is one block per frame, no resampler", "[stages]") {
    utterance_options o;
    o.format = audio_format::pcm16;
    o.sample_rate = 24000;
    auto stages = make_output_stages(o);
    REQUIRE(stages.ok());
    REQUIRE(stages->stages.size() == 1);
    CHECK(stages->stages[0]->name() == "pcm16_encode");
    auto out = run_output(o, 3);
    REQUIRE(out.size() == 4);
    for (int i = 0; i < 3; ++i) {
        auto& b = std::get<pcm16_block>(out[static_cast<std::size_t>(i)].payload);
        CHECK(b.bytes.size() == 2 * k_frame);
        CHECK(b.first_sample == std::int64_t{i} * k_frame);
        CHECK(b.sample_rate == 24000);
    }
}

TEST_CASE("PCM16 at another rate goes through the resampler", "[stages]") {
    for (int rate : {16000, 48000, 8000}) {
        INFO(rate);
        utterance_options o;
        o.format = audio_format::pcm16;
        o.sample_rate = rate;
        output_stages made;
        auto out = run_output(o, 4, &made);
        CHECK(made.sample_rate == rate);
        std::int64_t samples = 0;
        for (auto& f : out) {
            if (auto* b = std::get_if<pcm16_block>(&f.payload)) {
                CHECK(b->sample_rate == rate);
                CHECK(b->first_sample == samples);
                samples += static_cast<std::int64_t>(b->bytes.size() / 2);
            }
        }
        const std::int64_t expected = std::int64_t{4} * k_frame * rate / 24000;
        CHECK(std::abs(samples - expected) <= 1);
        CHECK(std::holds_alternative<end_of_audio>(out.back().payload));
    }
}

}  // namespace
}  // namespace megatts

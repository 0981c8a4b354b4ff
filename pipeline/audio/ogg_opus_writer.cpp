#include "pipeline/audio/ogg_opus_writer.h"

#include <opus/opus.h>

#include <span>
#include <string>
#include <utility>

#include "pipeline/audio/little_endian.h"
#include "pipeline/audio/sample_rates.h"

namespace megatts {
namespace {

constexpr int max_page_duration_ms = 1000;

error ogg_error(const char* call) {
    return make_error(error_kind::internal, std::string("ogg: ") + call + " failed");
}

// RFC 7845 §5.1.
std::vector<std::uint8_t> opus_head(int pre_skip) {
    std::vector<std::uint8_t> head;
    append_ascii(head, "OpusHead");
    head.push_back(1);  // version
    head.push_back(1);  // channel count
    append_le(head, static_cast<std::uint16_t>(pre_skip));
    append_le(head, static_cast<std::uint32_t>(vocoder_sample_rate));  // informational only
    append_le<std::uint16_t>(head, 0);  // output gain
    head.push_back(0);  // mapping family 0: mono or stereo, no channel mapping table
    return head;
}

// RFC 7845 §5.2.
std::vector<std::uint8_t> opus_tags() {
    const std::string vendor = std::string("megatts (") + opus_get_version_string() + ")";
    std::vector<std::uint8_t> tags;
    append_ascii(tags, "OpusTags");
    append_le(tags, static_cast<std::uint32_t>(vendor.size()));
    append_ascii(tags, vendor);
    append_le<std::uint32_t>(tags, 0);  // user comment count
    return tags;
}

// Duration at 48 kHz from the packet's TOC byte; 0 or less for bytes that are no Opus packet.
int packet_duration(std::span<const std::uint8_t> data) {
    // Checked here because libopus must not be handed the null pointer of an empty vector.
    if (data.empty()) return 0;
    return opus_packet_get_nb_samples(data.data(), static_cast<opus_int32>(data.size()),
                                      opus_granule_rate);
}

ogg_packet borrow_as_ogg_packet(std::span<const std::uint8_t> bytes) {
    ogg_packet packet{};
    // libogg copies the bytes in ogg_stream_packetin and never writes through this pointer.
    packet.packet = const_cast<unsigned char*>(bytes.data());
    packet.bytes = static_cast<long>(bytes.size());
    return packet;
}

}  // namespace

void ogg_opus_writer::stream_deleter::operator()(ogg_stream_state* stream) const {
    ogg_stream_clear(stream);
    delete stream;
}

result<ogg_opus_writer> ogg_opus_writer::create(int pre_skip,
                                                 const ogg_opus_writer_config& config) {
    if (pre_skip < 0 || pre_skip > 0xFFFF) {
        return make_error(error_kind::invalid_input,
                          "ogg opus: pre-skip must fit 16 bits, got " + std::to_string(pre_skip));
    }
    if (config.page_duration_ms < 0 || config.page_duration_ms > max_page_duration_ms) {
        return make_error(error_kind::invalid_input,
                          "ogg opus: page duration must be 0..1000 ms, got " +
                              std::to_string(config.page_duration_ms));
    }
    // Value-initialised, so that the deleter's ogg_stream_clear is safe even if init fails.
    std::unique_ptr<ogg_stream_state, stream_deleter> stream(new ogg_stream_state{});
    if (ogg_stream_init(stream.get(), static_cast<int>(config.serial)) != 0) {
        return ogg_error("ogg_stream_init");
    }
    ogg_opus_writer writer(std::move(stream), pre_skip,
                           config.page_duration_ms * (opus_granule_rate / 1000));
    MEGATTS_TRY(writer.write_headers());
    return writer;
}

ogg_opus_writer::ogg_opus_writer(std::unique_ptr<ogg_stream_state, stream_deleter> stream,
                                 int pre_skip, int page_duration_samples)
    : stream_(std::move(stream)),
      pre_skip_(pre_skip),
      page_duration_samples_(page_duration_samples) {}

result<void> ogg_opus_writer::write_headers() {
    // Each header gets a page of its own, and the first audio packet starts a fresh page, as
    // RFC 7845 §3 requires.
    for (const auto& header : {opus_head(pre_skip_), opus_tags()}) {
        ogg_packet packet = borrow_as_ogg_packet(header);
        packet.b_o_s = packet_count_ == 0;
        packet.granulepos = 0;
        packet.packetno = packet_count_++;
        if (ogg_stream_packetin(stream_.get(), &packet) != 0) {
            return ogg_error("ogg_stream_packetin");
        }
        MEGATTS_TRY(flush_pages());
    }
    return {};
}

result<std::vector<std::uint8_t>> ogg_opus_writer::append(std::span<const opus_packet> packets) {
    for (const opus_packet& packet : packets) MEGATTS_TRY(submit(packet, false));
    return std::exchange(out_, {});
}

result<std::vector<std::uint8_t>> ogg_opus_writer::finish(
    std::span<const opus_packet> final_packets) {
    if (final_packets.empty()) {
        return make_error(error_kind::invalid_input,
                          "ogg opus: finish() needs the packets of the encoder's flush()");
    }
    for (std::size_t i = 0; i + 1 < final_packets.size(); ++i) {
        MEGATTS_TRY(submit(final_packets[i], false));
    }
    MEGATTS_TRY(submit(final_packets.back(), true));
    finished_ = true;
    return std::exchange(out_, {});
}

result<void> ogg_opus_writer::submit(const opus_packet& packet, bool end_of_stream) {
    if (finished_) {
        return make_error(error_kind::invalid_input, "ogg opus: packet after the end of stream");
    }
    const int duration = packet_duration(packet.data);
    if (duration <= 0) {
        return make_error(error_kind::invalid_input,
                          "ogg opus: unparsable Opus packet at sample " +
                              std::to_string(packet.first_sample));
    }
    const std::int64_t granule_after = granule_ + duration;
    const std::int64_t real_samples_after = real_samples_ + packet.real_samples;
    std::int64_t granule = granule_after;
    if (end_of_stream) {
        // The end trim may only cut into this last packet: a granule at or before the end of
        // the earlier packets would trim more, and one past this packet's end would claim
        // samples that no packet holds.
        granule = pre_skip_ + real_samples_after * (opus_granule_rate / vocoder_sample_rate);
        if (granule <= granule_ || granule > granule_after) {
            return make_error(error_kind::invalid_input,
                              "ogg opus: final packets do not end the stream at its last sample "
                              "(pass exactly the packets of opus_packet_encoder::flush())");
        }
    }

    ogg_packet ogg = borrow_as_ogg_packet(packet.data);
    ogg.e_o_s = end_of_stream;
    ogg.granulepos = granule;
    ogg.packetno = packet_count_++;
    if (ogg_stream_packetin(stream_.get(), &ogg) != 0) return ogg_error("ogg_stream_packetin");
    granule_ = granule_after;
    real_samples_ = real_samples_after;
    open_page_samples_ += duration;
    if (end_of_stream || open_page_samples_ >= page_duration_samples_) MEGATTS_TRY(flush_pages());
    return {};
}

result<void> ogg_opus_writer::flush_pages() {
    // ogg_stream_flush returns one page per call while anything is buffered; a page holds at
    // most 255 lacing values, so a long page duration can take several.
    ogg_page page;
    while (ogg_stream_flush(stream_.get(), &page) != 0) {
        out_.insert(out_.end(), page.header, page.header + page.header_len);
        out_.insert(out_.end(), page.body, page.body + page.body_len);
    }
    if (ogg_stream_check(stream_.get()) != 0) return ogg_error("ogg_stream_flush");
    open_page_samples_ = 0;
    return {};
}

}  // namespace megatts

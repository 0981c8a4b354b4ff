#include "daemon/protocol/client_message.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "daemon/protocol/json_member_reader.h"
#include "daemon/protocol/json_unicode.h"
#include "pipeline/text/utf8.h"

namespace megatts {
namespace {

using json = nlohmann::ordered_json;

// The protocol's numeric ranges (PROTOCOL.md §2.1).
constexpr std::int64_t max_context = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t max_seed = (std::int64_t{1} << 53) - 1;  // exact in a JavaScript number
constexpr int min_pcm_rate = 8000;
constexpr int max_pcm_rate = 48000;
constexpr int opus_clock_rate = 48000;
constexpr double max_temperature = 2.0;

template <class T>
std::optional<T> narrow(std::optional<std::int64_t> v) {
    return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

template <class T>
std::optional<T> narrow(std::optional<double> v) {
    return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

// The `flush` and `end` members of start and text: at most one of them may be true.
void read_text_end(json_member_reader& r, bool& flush, bool& end) {
    flush = r.boolean("flush").value_or(false);
    end = r.boolean("end").value_or(false);
    if (flush && end) r.fail("end", "flush and end cannot both be true");
}

sampling_options read_sampling(const json& object, json_member_reader& parent) {
    json_member_reader r(object, parent.path() + ".sampling");
    sampling_options s;
    s.seed = narrow<std::uint64_t>(r.integer("seed", 0, max_seed));
    s.greedy = r.boolean("greedy").value_or(false);
    s.temperature = narrow<float>(r.number("temperature", 0.0, max_temperature));
    if (s.temperature && *s.temperature <= 0.0f) r.fail("temperature", "must be greater than 0");
    s.top_k = narrow<int>(r.integer("top_k", 0, std::numeric_limits<int>::max()));
    s.top_p = narrow<float>(r.number("top_p", 0.0, 1.0));
    if (s.top_p && *s.top_p <= 0.0f) r.fail("top_p", "must be greater than 0");
    parent.adopt_failure(r);
    return s;
}

start_message read_start(json_member_reader& r) {
    start_message m;
    m.protocol = r.string("protocol");
    m.voice = r.string("voice");
    m.language = r.string("language");
    if (auto name = r.string("format")) {
        if (auto format = audio_format_from_name(*name))
            m.format = *format;
        else
            r.fail("format", "must be \"opus\" or \"pcm16\"");
    }
    m.sample_rate = narrow<int>(r.integer("sample_rate", min_pcm_rate, max_pcm_rate));
    if (m.format == audio_format::opus && m.sample_rate && *m.sample_rate != opus_clock_rate)
        r.fail("sample_rate", "must be 48000 for opus (the Opus clock)");
    m.opus_frame_ms = narrow<int>(r.integer("opus_frame_ms", 10, 20));
    if (m.opus_frame_ms && *m.opus_frame_ms != 10 && *m.opus_frame_ms != 20) r.fail("opus_frame_ms", "must be 10 or 20");
    m.max_frames = narrow<int>(r.integer("max_frames", 0, std::numeric_limits<int>::max()));
    if (const auto* sampling = r.object("sampling")) m.sampling = read_sampling(*sampling, r);
    m.text = r.string("text");
    read_text_end(r, m.flush, m.end);
    m.trace = r.boolean("trace").value_or(false);
    return m;
}

client_metrics_message read_client_metrics(json_member_reader& r) {
    constexpr double max_ms = 86400e3;
    constexpr std::int64_t max_count = std::int64_t{1} << 53;
    client_metrics_message m;
    m.context = narrow<std::uint32_t>(r.integer("context", 1, max_context));
    m.first_played_ms = r.number("first_played_ms", 0.0, max_ms);
    m.underruns = r.integer("underruns", 0, max_count);
    m.buffer_ms = r.number("buffer_ms", 0.0, max_ms);
    m.played_samples = r.integer("played_samples", 0, max_count);
    m.decode_errors = r.integer("decode_errors", 0, max_count);
    return m;
}

std::optional<client_message> read_message(std::string_view type, json_member_reader& r) {
    if (type == "start") return read_start(r);
    if (type == "text") {
        r.require("text");
        text_message m{r.string("text").value_or("")};
        read_text_end(r, m.flush, m.end);
        return m;
    }
    if (type == "flush") return flush_message{};
    if (type == "end") return end_message{};
    if (type == "cancel") return cancel_message{};
    if (type == "client_metrics") return read_client_metrics(r);
    return std::nullopt;
}

// A client's string quoted back in an error message, cut to a few dozen bytes (at a character
// boundary) so that an error never costs more than the message that caused it.
std::string excerpt(std::string_view text) {
    constexpr std::size_t max_bytes = 48;
    if (text.size() <= max_bytes) return std::string(text);
    auto cut = text.substr(0, max_bytes);
    return std::string(cut.substr(0, utf8_valid_prefix_length(cut))) + "...";
}

json encode_sampling(const sampling_options& s) {
    json out = json::object();
    if (s.seed) out["seed"] = *s.seed;
    if (s.greedy) out["greedy"] = true;
    if (s.temperature) out["temperature"] = *s.temperature;
    if (s.top_k) out["top_k"] = *s.top_k;
    if (s.top_p) out["top_p"] = *s.top_p;
    return out;
}

template <class T>
void put(json& out, const char* name, const std::optional<T>& value) {
    if (value) out[name] = *value;
}

json encode(const start_message& m) {
    json out = {{"type", "start"}, {"format", audio_format_name(m.format)}};
    put(out, "protocol", m.protocol);
    put(out, "voice", m.voice);
    put(out, "language", m.language);
    put(out, "sample_rate", m.sample_rate);
    put(out, "opus_frame_ms", m.opus_frame_ms);
    put(out, "max_frames", m.max_frames);
    if (auto sampling = encode_sampling(m.sampling); !sampling.empty()) out["sampling"] = sampling;
    put(out, "text", m.text);
    if (m.flush) out["flush"] = true;
    if (m.end) out["end"] = true;
    if (m.trace) out["trace"] = true;
    return out;
}

json encode(const text_message& m) {
    json out = {{"type", "text"}, {"text", m.text}};
    if (m.flush) out["flush"] = true;
    if (m.end) out["end"] = true;
    return out;
}
json encode(const flush_message&) { return {{"type", "flush"}}; }
json encode(const end_message&) { return {{"type", "end"}}; }

json encode(const cancel_message&) { return {{"type", "cancel"}}; }

json encode(const client_metrics_message& m) {
    json out = {{"type", "client_metrics"}};
    put(out, "context", m.context);
    put(out, "first_played_ms", m.first_played_ms);
    put(out, "underruns", m.underruns);
    put(out, "buffer_ms", m.buffer_ms);
    put(out, "played_samples", m.played_samples);
    put(out, "decode_errors", m.decode_errors);
    return out;
}

}  // namespace

std::variant<client_message, protocol_error> parse_client_message(std::string_view payload) {
    const json object = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) {
        if (json_unicode_problem(payload))
            return protocol_error{error_code::invalid_utf8, "the message holds ill-formed Unicode"};
        return protocol_error{error_code::bad_json, "the message is not valid JSON"};
    }
    if (!object.is_object()) return protocol_error{error_code::bad_json, "the message is not a JSON object"};
    const auto type_member = object.find("type");
    if (type_member == object.end() || !type_member->is_string())
        return protocol_error{error_code::bad_message, "the message has no string member 'type'"};
    const auto& type = type_member->get_ref<const std::string&>();
    json_member_reader reader(object, type);
    auto message = read_message(type, reader);
    if (!message) return protocol_error{error_code::unknown_type, "unknown message type '" + excerpt(type) + "'"};
    if (reader.failure()) return *reader.failure();
    return *message;
}

std::string encode_client_message(const client_message& message) {
    return std::visit([](const auto& m) { return encode(m).dump(); }, message);
}

}  // namespace megatts

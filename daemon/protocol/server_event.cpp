#include "daemon/protocol/server_event.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "daemon/protocol/json_member_reader.h"

namespace megatts {
namespace {

using json = nlohmann::ordered_json;

constexpr std::int64_t max_u32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t max_int = std::numeric_limits<int>::max();
constexpr double max_double = std::numeric_limits<double>::max();

template <class T>
void put(json& out, const char* name, const std::optional<T>& value) {
    if (value) out[name] = *value;
}

json encode(const ready_event& e) {
    const auto& d = e.defaults;
    const auto& l = e.limits;
    return {
        {"type", "ready"},
        {"protocol", e.protocol},
        {"server", e.server},
        {"model", e.model},
        {"synthetic", e.synthetic},
        {"voices", e.voices},
        {"languages", e.languages},
        {"defaults",
         {{"voice", d.voice},
          {"language", d.language},
          {"format", audio_format_name(d.format)},
          {"opus_frame_ms", d.opus_frame_ms},
          {"sampling", {{"temperature", d.temperature}, {"top_k", d.top_k}, {"top_p", d.top_p}}}}},
        {"limits",
         {{"max_text_bytes", l.max_text_bytes},
          {"max_message_bytes", l.max_message_bytes},
          {"queued_utterances", l.queued_utterances},
          {"send_queue_soft_ms", l.send_queue_soft_ms},
          {"send_queue_hard_ms", l.send_queue_hard_ms},
          {"stall_timeout_ms", l.stall_timeout_ms},
          {"idle_timeout_s", l.idle_timeout_s},
          {"keepalive_timeout_s", l.keepalive_timeout_s},
          {"max_errors", l.max_errors}}},
    };
}

json encode(const started_event& e) {
    json out = {{"type", "started"},
                {"context", e.context},
                {"format", audio_format_name(e.format)},
                {"sample_rate", e.sample_rate},
                {"channels", 1}};
    put(out, "opus_frame_ms", e.opus_frame_ms);
    put(out, "pre_skip", e.pre_skip);
    return out;
}

json encode(const metrics_event& e) {
    json marks = json::object();
    for (const auto& [name, ms] : e.marks) marks[name] = ms;
    json out = {{"type", "metrics"}, {"context", e.context}, {"marks", marks}};
    put(out, "server_ttfa_ms", e.server_ttfa_ms);
    return out;
}

json encode(const done_event& e) {
    json out = {{"type", "done"}, {"context", e.context}, {"reason", done_reason_name(e.reason)}};
    if (e.layout) out["layout"] = utterance_layout_name(*e.layout);
    out["frames"] = e.frames;
    out["audio_ms"] = e.audio_ms;
    out["messages"] = e.messages;
    put(out, "rtf", e.rtf);
    if (e.trace_json) {
        auto trace = json::parse(*e.trace_json, nullptr, /*allow_exceptions=*/false);
        if (!trace.is_discarded()) out["trace"] = std::move(trace);
    }
    return out;
}

json encode(const stall_event& e) {
    return {{"type", "stall"}, {"stalled", e.stalled}, {"queued_ms", e.queued_ms}};
}

json encode(const error_event& e) {
    json out = {{"type", "error"}, {"code", error_code_name(e.code)}, {"message", e.message}, {"fatal", e.fatal}};
    put(out, "context", e.context);
    return out;
}

std::vector<std::string> read_strings(const json& object, std::string_view name, json_member_reader& r) {
    std::vector<std::string> out;
    const auto it = object.find(name);
    if (it == object.end() || !it->is_array()) {
        r.fail(name, "must be an array of strings");
        return out;
    }
    for (const auto& item : *it) {
        if (!item.is_string()) {
            r.fail(name, "must be an array of strings");
            return {};
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

ready_event read_ready(const json& object, json_member_reader& r) {
    ready_event e;
    for (const char* name : {"protocol", "model", "synthetic", "voices", "languages", "defaults", "limits"})
        r.require(name);
    e.protocol = r.string("protocol").value_or("");
    e.server = r.string("server").value_or("");
    e.model = r.string("model").value_or("");
    e.synthetic = r.boolean("synthetic").value_or(false);
    e.voices = read_strings(object, "voices", r);
    e.languages = read_strings(object, "languages", r);
    if (const auto* defaults = r.object("defaults")) {
        json_member_reader d(*defaults, r.path() + ".defaults");
        e.defaults.voice = d.string("voice").value_or("");
        e.defaults.language = d.string("language").value_or("auto");
        e.defaults.format = audio_format_from_name(d.string("format").value_or("opus")).value_or(audio_format::opus);
        e.defaults.opus_frame_ms = static_cast<int>(d.integer("opus_frame_ms", 10, 20).value_or(20));
        if (const auto* sampling = d.object("sampling")) {
            json_member_reader s(*sampling, d.path() + ".sampling");
            e.defaults.temperature = static_cast<float>(s.number("temperature", 0, max_double).value_or(0));
            e.defaults.top_k = static_cast<int>(s.integer("top_k", 0, max_int).value_or(0));
            e.defaults.top_p = static_cast<float>(s.number("top_p", 0, 1).value_or(0));
            d.adopt_failure(s);
        }
        r.adopt_failure(d);
    }
    if (const auto* limits = r.object("limits")) {
        json_member_reader l(*limits, r.path() + ".limits");
        auto read = [&](const char* name) { return static_cast<int>(l.integer(name, 0, max_int).value_or(0)); };
        e.limits = {read("max_text_bytes"),     read("max_message_bytes"), read("queued_utterances"),
                    read("send_queue_soft_ms"), read("send_queue_hard_ms"), read("stall_timeout_ms"),
                    read("idle_timeout_s"),     read("keepalive_timeout_s"), read("max_errors")};
        r.adopt_failure(l);
    }
    return e;
}

std::uint32_t read_context(json_member_reader& r) {
    r.require("context");
    return static_cast<std::uint32_t>(r.integer("context", 0, max_u32).value_or(0));
}

started_event read_started(json_member_reader& r) {
    started_event e;
    e.context = read_context(r);
    r.require("format");
    if (auto format = audio_format_from_name(r.string("format").value_or("")))
        e.format = *format;
    else
        r.fail("format", "must be \"opus\" or \"pcm16\"");
    r.require("sample_rate");
    e.sample_rate = static_cast<int>(r.integer("sample_rate", 1, max_int).value_or(0));
    if (auto ms = r.integer("opus_frame_ms", 10, 20)) e.opus_frame_ms = static_cast<int>(*ms);
    if (auto skip = r.integer("pre_skip", 0, max_int)) e.pre_skip = static_cast<int>(*skip);
    return e;
}

metrics_event read_metrics(json_member_reader& r) {
    metrics_event e;
    e.context = read_context(r);
    r.require("marks");
    if (const auto* marks = r.object("marks")) {
        for (const auto& [name, value] : marks->items()) {
            if (!value.is_number()) {
                r.fail("marks", "every mark must be a number");
                break;
            }
            e.marks.emplace_back(name, value.get<double>());
        }
    }
    e.server_ttfa_ms = r.number("server_ttfa_ms", 0, max_double);
    return e;
}

done_event read_done(const json& object, json_member_reader& r) {
    done_event e;
    e.context = read_context(r);
    r.require("reason");
    const auto reason = r.string("reason").value_or("");
    bool known = false;
    for (auto candidate : {done_reason::end, done_reason::cancelled, done_reason::max_frames, done_reason::error}) {
        if (reason == done_reason_name(candidate)) {
            e.reason = candidate;
            known = true;
        }
    }
    if (!known) r.fail("reason", "unknown reason '" + reason + "'");
    if (auto layout = r.string("layout")) {
        if (*layout == "whole" || *layout == "streaming")
            e.layout = *layout == "whole" ? utterance_layout::whole : utterance_layout::streaming;
        else
            r.fail("layout", "must be \"whole\" or \"streaming\"");
    }
    e.frames = static_cast<int>(r.integer("frames", 0, max_int).value_or(0));
    e.audio_ms = r.number("audio_ms", 0, max_double).value_or(0);
    e.messages = r.integer("messages", 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
    e.rtf = r.number("rtf", 0, max_double);
    if (const auto it = object.find("trace"); it != object.end()) e.trace_json = it->dump();
    return e;
}

stall_event read_stall(json_member_reader& r) {
    stall_event e;
    r.require("stalled");
    e.stalled = r.boolean("stalled").value_or(false);
    e.queued_ms = static_cast<int>(r.integer("queued_ms", 0, max_int).value_or(0));
    return e;
}

error_event read_error(json_member_reader& r) {
    error_event e;
    r.require("code");
    r.require("message");
    const auto code = r.string("code").value_or("");
    if (auto known = error_code_from_name(code))
        e.code = *known;
    else
        r.fail("code", "unknown error code '" + code + "'");
    e.message = r.string("message").value_or("");
    if (auto context = r.integer("context", 0, max_u32)) e.context = static_cast<std::uint32_t>(*context);
    e.fatal = r.boolean("fatal").value_or(false);
    return e;
}

std::optional<server_event> read_event(std::string_view type, const json& object, json_member_reader& r) {
    if (type == "ready") return read_ready(object, r);
    if (type == "started") return read_started(r);
    if (type == "metrics") return read_metrics(r);
    if (type == "done") return read_done(object, r);
    if (type == "stall") return read_stall(r);
    if (type == "error") return read_error(r);
    return std::nullopt;
}

}  // namespace

std::string_view done_reason_name(done_reason reason) {
    switch (reason) {
    case done_reason::end: return "end";
    case done_reason::cancelled: return "cancelled";
    case done_reason::max_frames: return "max_frames";
    case done_reason::error: return "error";
    }
    return "error";
}

std::string_view utterance_layout_name(utterance_layout layout) {
    return layout == utterance_layout::whole ? "whole" : "streaming";
}

std::string encode_server_event(const server_event& event) {
    return std::visit([](const auto& e) { return encode(e).dump(-1, ' ', false, json::error_handler_t::replace); },
                      event);
}

std::variant<server_event, protocol_error> parse_server_event(std::string_view payload) {
    const json object = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded() || !object.is_object())
        return protocol_error{error_code::bad_json, "the event is not a JSON object"};
    const auto type = object.find("type");
    if (type == object.end() || !type->is_string())
        return protocol_error{error_code::bad_message, "the event has no string member 'type'"};
    json_member_reader reader(object, type->get<std::string>());
    auto event = read_event(type->get_ref<const std::string&>(), object, reader);
    if (!event) return protocol_error{error_code::unknown_type, "unknown event type '" + type->get<std::string>() + "'"};
    if (reader.failure()) return *reader.failure();
    return *event;
}

}  // namespace megatts

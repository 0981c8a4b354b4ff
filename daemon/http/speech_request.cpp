#include "daemon/http/speech_request.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "daemon/protocol/json_member_reader.h"
#include "daemon/protocol/json_unicode.h"

namespace megatts {
namespace {

using json = nlohmann::ordered_json;

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

speech_request_error failure(error_code code, std::string message, std::string param) {
    return {{code, std::move(message)}, std::move(param)};
}

// The member named in a reader's failure ("speech.voice: must be ..." -> "voice").
std::string failed_member(const protocol_error& e) {
    const auto start = e.message.find('.') + 1;
    return e.message.substr(start, e.message.find(':') - start);
}

std::optional<speech_format> format_from_name(std::string_view name) {
    if (name == "opus") return speech_format::opus;
    if (name == "wav") return speech_format::wav;
    if (name == "pcm") return speech_format::pcm;
    return std::nullopt;
}

}  // namespace

std::variant<speech_request, speech_request_error> parse_speech_request(std::string_view body,
                                                                        std::size_t max_text_bytes) {
    const json object = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) {
        if (json_unicode_problem(body)) return failure(error_code::invalid_utf8, "the body holds ill-formed Unicode", "");
        return failure(error_code::bad_json, "the body is not valid JSON", "");
    }
    if (!object.is_object()) return failure(error_code::bad_json, "the body is not a JSON object", "");

    json_member_reader r(object, "speech");
    speech_request request;
    r.require("input");
    request.input = r.string("input").value_or("");
    if (!r.failure() && request.input.empty()) r.fail("input", "must not be empty");
    if (!r.failure() && request.input.size() > max_text_bytes)
        r.fail("input", "is longer than " + std::to_string(max_text_bytes) + " bytes");
    if (const auto* voice = object.contains("voice") && object["voice"].is_object() ? &object["voice"] : nullptr) {
        json_member_reader v(*voice, "speech.voice");
        v.require("id");
        if (auto id = v.string("id")) request.voice = lower(*id);
        r.adopt_failure(v);
    } else if (auto name = r.string("voice")) {
        request.voice = lower(*name);
    }
    r.string("model");  // accepted for compatibility; there is one model per server
    if (auto speed = r.number("speed", 0.25, 4.0); speed && *speed != 1.0) r.fail("speed", "only 1.0 is supported");
    if (auto language = r.string("language")) request.language = lower(*language);
    request.stream = r.boolean("stream").value_or(false);
    request.sample_rate = static_cast<int>(r.integer("sample_rate", 8000, 48000).value_or(24000));
    request.sampling.seed = r.integer("seed", 0, (std::int64_t{1} << 53) - 1);
    request.sampling.greedy = r.boolean("greedy").value_or(false);
    if (auto t = r.number("temperature", 0.0, 2.0)) {
        if (*t <= 0.0) r.fail("temperature", "must be greater than 0");
        request.sampling.temperature = static_cast<float>(*t);
    }
    if (auto k = r.integer("top_k", 0, 1 << 20)) request.sampling.top_k = static_cast<int>(*k);
    if (auto p = r.number("top_p", 0.0, 1.0)) {
        if (*p <= 0.0) r.fail("top_p", "must be greater than 0");
        request.sampling.top_p = static_cast<float>(*p);
    }
    if (auto name = r.string("response_format")) {
        if (auto format = format_from_name(*name)) {
            request.format = *format;
        } else if (*name == "mp3" || *name == "aac" || *name == "flac") {
            return failure(error_code::unsupported_format,
                           "response_format '" + *name + "' is not supported; use opus, wav or pcm", "response_format");
        } else {
            r.fail("response_format", "must be \"opus\", \"wav\" or \"pcm\"");
        }
    }
    if (const auto& e = r.failure()) return failure(error_code::bad_request, e->message, failed_member(*e));
    return request;
}

}  // namespace megatts

// Fuzz target: the JSON body of POST /v1/audio/speech (PROTOCOL.md §7.1) through
// parse_speech_request, with the server's default text limit.
// Properties: never crashes; an accepted request keeps the limits the parser promises (input
// 1..max_text_bytes bytes, sample rate 8000..48000, voice and language lower case); an error
// is one of the parser's codes and its OpenAI error body encodes.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "daemon/config/server_config.h"
#include "daemon/http/error_response.h"
#include "daemon/http/speech_request.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

namespace {

bool lower_case(std::string_view text) {
    return std::none_of(text.begin(), text.end(), [](unsigned char c) { return std::isupper(c); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto max_text_bytes = static_cast<std::size_t>(limits_section{}.max_text_bytes);
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    auto parsed = parse_speech_request(body, max_text_bytes);
    if (const auto* e = std::get_if<speech_request_error>(&parsed)) {
        const auto code = e->error.code;
        FUZZ_CHECK(code == error_code::bad_json || code == error_code::invalid_utf8 ||
                       code == error_code::bad_request || code == error_code::unsupported_format,
                   "the parser answers with its own error codes only");
        const auto response = error_response(http_request{}, http::status::bad_request, code, e->error.message, e->param);
        FUZZ_CHECK(!response.body().empty(), "the error body encodes");
        return 0;
    }
    const auto& request = std::get<speech_request>(parsed);
    FUZZ_CHECK(!request.input.empty() && request.input.size() <= max_text_bytes, "input within 1..max_text_bytes");
    FUZZ_CHECK(request.sample_rate >= 8000 && request.sample_rate <= 48000, "sample rate within 8000..48000");
    FUZZ_CHECK(!request.voice || lower_case(*request.voice), "voice lower case");
    FUZZ_CHECK(lower_case(request.language), "language lower case");
    return 0;
}

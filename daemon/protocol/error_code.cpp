#include "daemon/protocol/error_code.h"

#include <array>
#include <utility>

namespace megatts {
namespace {

constexpr auto names = std::to_array<std::pair<error_code, std::string_view>>({
    {error_code::bad_json, "bad_json"},
    {error_code::bad_message, "bad_message"},
    {error_code::unknown_type, "unknown_type"},
    {error_code::invalid_utf8, "invalid_utf8"},
    {error_code::protocol_mismatch, "protocol_mismatch"},
    {error_code::unknown_voice, "unknown_voice"},
    {error_code::unknown_language, "unknown_language"},
    {error_code::text_too_long, "text_too_long"},
    {error_code::utterance_open, "utterance_open"},
    {error_code::no_utterance, "no_utterance"},
    {error_code::empty_text, "empty_text"},
    {error_code::too_many_utterances, "too_many_utterances"},
    {error_code::queue_full, "queue_full"},
    {error_code::synthesis_failed, "synthesis_failed"},
    {error_code::slow_consumer, "slow_consumer"},
    {error_code::server_busy, "server_busy"},
    {error_code::too_many_errors, "too_many_errors"},
    {error_code::internal, "internal"},
    {error_code::bad_request, "bad_request"},
    {error_code::unsupported_format, "unsupported_format"},
    {error_code::payload_too_large, "payload_too_large"},
    {error_code::not_ready, "not_ready"},
    {error_code::not_found, "not_found"},
    {error_code::method_not_allowed, "method_not_allowed"},
});
static_assert(names.size() == k_error_code_count, "every error_code has a name");

}  // namespace

std::string_view error_code_name(error_code code) {
    for (const auto& [c, name] : names)
        if (c == code) return name;
    return "internal";
}

std::optional<error_code> error_code_from_name(std::string_view name) {
    for (const auto& [c, n] : names)
        if (n == name) return c;
    return std::nullopt;
}

bool error_code_fatal(error_code code) { return error_close_code(code).has_value(); }

std::optional<std::uint16_t> error_close_code(error_code code) {
    switch (code) {
    case error_code::protocol_mismatch:
    case error_code::slow_consumer:
    case error_code::too_many_errors:
        return close_code::policy;
    case error_code::server_busy:
        return close_code::try_again_later;
    case error_code::internal:
        return close_code::internal_error;
    default:
        return std::nullopt;
    }
}

}  // namespace megatts

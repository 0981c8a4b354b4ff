// error_code: the stable error codes of PROTOCOL.md §4.6 and §7.3, with what each one does to
// the connection.
//
// Contract: error_code_name gives the exact wire spelling; error_close_code the WebSocket close
// code that follows the error, or nothing when the error is not fatal and the connection
// carries on. Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace megatts {

enum class error_code {
    bad_json,
    bad_message,
    unknown_type,
    invalid_utf8,
    protocol_mismatch,
    unknown_voice,
    unknown_language,
    text_too_long,
    utterance_open,
    no_utterance,
    empty_text,
    too_many_utterances,
    queue_full,
    synthesis_failed,
    slow_consumer,
    server_busy,
    too_many_errors,
    internal,
    // HTTP only (§7.3).
    bad_request,
    unsupported_format,
    payload_too_large,
    not_ready,
    not_found,
    method_not_allowed,
};

inline constexpr int k_error_code_count = static_cast<int>(error_code::method_not_allowed) + 1;

// WebSocket close codes (RFC 6455 §7.4.1) that PROTOCOL.md §6 uses.
namespace close_code {
inline constexpr std::uint16_t normal = 1000;
inline constexpr std::uint16_t going_away = 1001;
inline constexpr std::uint16_t invalid_payload = 1007;
inline constexpr std::uint16_t policy = 1008;
inline constexpr std::uint16_t message_too_big = 1009;
inline constexpr std::uint16_t internal_error = 1011;
inline constexpr std::uint16_t try_again_later = 1013;
}  // namespace close_code

std::string_view error_code_name(error_code code);
std::optional<error_code> error_code_from_name(std::string_view name);
bool error_code_fatal(error_code code);
std::optional<std::uint16_t> error_close_code(error_code code);

// An error as the protocol reports it: a code to match on and a message for people.
struct protocol_error {
    error_code code = error_code::internal;
    std::string message;
};

}  // namespace megatts

// Fuzz target: the payload of one WebSocket text message through the protocol decoder
// (PROTOCOL.md §2), as websocket_session hands it over.
// Properties: never crashes; an error is one of the four decoder codes and its event encodes
// (no client byte can make the error message unencodable); an accepted message encodes, and
// the encoding decodes to the same message (encode_client_message is the inverse of parse).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "daemon/protocol/client_message.h"
#include "daemon/protocol/server_event.h"
#include "pipeline/text/utf8.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    auto parsed = parse_client_message(payload);
    if (const auto* e = std::get_if<protocol_error>(&parsed)) {
        FUZZ_CHECK(e->code == error_code::bad_json || e->code == error_code::bad_message ||
                       e->code == error_code::unknown_type || e->code == error_code::invalid_utf8,
                   "the decoder answers with its own error codes only");
        FUZZ_CHECK(utf8_valid_prefix_length(e->message) == e->message.size(), "error messages are UTF-8");
        const auto event = encode_server_event(error_event{.code = e->code, .message = e->message});
        FUZZ_CHECK(!event.empty(), "the error event encodes");
        return 0;
    }
    const auto& message = std::get<client_message>(parsed);
    const auto again = parse_client_message(encode_client_message(message));
    const auto* decoded = std::get_if<client_message>(&again);
    FUZZ_CHECK(decoded != nullptr, "an accepted message's encoding is accepted");
    FUZZ_CHECK(*decoded == message, "an accepted message's encoding decodes to the same message");
    return 0;
}

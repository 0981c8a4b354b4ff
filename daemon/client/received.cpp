#include "daemon/client/received.h"

#include <string_view>

namespace megatts::client {

result<received> decode_received(bool text, std::span<const std::uint8_t> bytes,
                                 std::chrono::steady_clock::time_point arrived) {
    if (text) {
        auto event = parse_server_event(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        if (auto* e = std::get_if<protocol_error>(&event))
            return make_error(error_kind::invalid_input, "undecodable event: " + e->message);
        return received{std::get<server_event>(std::move(event))};
    }
    auto header = decode_audio_header(bytes);
    if (!header) return header.err();
    return received{received_audio{*header, {bytes.begin() + audio_header_bytes, bytes.end()}, arrived}};
}

}  // namespace megatts::client

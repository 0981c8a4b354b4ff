#include "tests/e2e/client/close_reader.h"

namespace megatts::e2e {

result<closed_with> read_until_close(client::tts_client& client, std::chrono::milliseconds timeout) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + timeout;
    std::optional<error_event> last_error;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
        if (left.count() <= 0) return make_error(error_kind::unavailable, "no close within the time limit");
        auto message = client.receive(left);
        if (!message) return message.err();
        if (auto* close = std::get_if<client::received_close>(&*message)) return closed_with{*close, last_error};
        if (auto* event = std::get_if<server_event>(&*message))
            if (auto* e = std::get_if<error_event>(event)) last_error = *e;
    }
}

}  // namespace megatts::e2e

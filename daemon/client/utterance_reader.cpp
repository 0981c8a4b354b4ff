#include "daemon/client/utterance_reader.h"

namespace megatts::client {

result<utterance_record> utterance_reader::next(std::chrono::milliseconds deadline) {
    using clock = std::chrono::steady_clock;
    const auto end = clock::now() + deadline;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock::now());
        if (left.count() <= 0) return make_error(error_kind::unavailable, "no done within the deadline");
        auto message = client_.receive(left);
        if (!message) return message.err();
        auto record = assembler_.add(std::move(*message));
        if (!record) return record.err();
        if (*record) return std::move(**record);
    }
}

result<utterance_record> receive_utterance(tts_client& client, std::chrono::milliseconds deadline) {
    return utterance_reader(client).next(deadline);
}

}  // namespace megatts::client

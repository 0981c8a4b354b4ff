// tts_client: a blocking client of WS /v1/tts (daemon/PROTOCOL.md) for tests and tools: connect,
// send client messages, receive events, audio messages and the close, each within a deadline.
//
// Contract: every call blocks until it completes or its timeout passes; a timeout fails the
// call and drops the connection (the peer then sees it vanish), so no caller waits forever.
// Messages are decoded with the daemon's own protocol codec (received.h). drop() closes the
// socket at once without a closing handshake, as a client that crashes or loses its network.
// Built on tts_connection, run on the client's own io_context for the duration of each call.
// Not thread-safe: one thread per client.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "daemon/client/received.h"
#include "daemon/client/tts_connection.h"
#include "daemon/protocol/client_message.h"
#include "kernels/common/result.h"

namespace megatts::client {

class tts_client {
public:
    static result<tts_client> connect(const client_options& options);
    tts_client(tts_client&&) noexcept;
    tts_client& operator=(tts_client&&) noexcept;
    ~tts_client();

    result<void> send(const client_message& message, std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // Any payload, as a text or binary frame: for tests of bad input.
    result<void> send_raw(const std::string& payload, bool binary,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // The next message; the server's close frame becomes received_close (and ends the
    // connection); an undecodable event or audio header is an error.
    result<received> receive(std::chrono::milliseconds timeout);
    result<void> close(std::chrono::milliseconds timeout = std::chrono::seconds(5));
    void drop();

private:
    struct state;
    explicit tts_client(std::unique_ptr<state> s);
    std::unique_ptr<state> state_;
};

}  // namespace megatts::client

// tts_client: a client of WS /v1/tts (daemon/PROTOCOL.md) for tests and tools: connect, send
// client messages, receive events, audio messages and the close, each within a deadline.
//
// Contract: every call blocks until it completes or its timeout passes; a timeout fails the
// call and drops the connection (the peer then sees it vanish), so no test waits forever.
// Messages are decoded with the daemon's own protocol codec (client_message, server_event,
// audio_header), so a test checks the wire against the same definitions the server uses.
// Not thread-safe: one thread per client. Each client runs its own io_context; the calls are
// the asynchronous Beast operations run to completion, so the class can move to a shared
// io_context (an open-loop load generator) without changing its protocol handling.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/protocol/audio_header.h"
#include "daemon/protocol/client_message.h"
#include "daemon/protocol/server_event.h"
#include "kernels/common/result.h"

namespace megatts::e2e {

struct client_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    std::string path = "/v1/tts";
    // Offer the subprotocol megatts.v1 (empty: offer none, so `start` must name the protocol).
    std::string subprotocol = "megatts.v1";
    // SO_RCVBUF of the client's socket (0: the OS default); small values make a slow reader's
    // backlog reach the server's queue quickly.
    int receive_buffer_bytes = 0;
    std::chrono::milliseconds timeout{10000};  // connect and handshake
};

struct received_audio {
    audio_header header;
    std::vector<std::uint8_t> payload;
};

struct received_close {
    std::uint16_t code = 0;
    std::string reason;
};

using received = std::variant<server_event, received_audio, received_close>;

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

private:
    struct state;
    explicit tts_client(std::unique_ptr<state> s);
    std::unique_ptr<state> state_;
};

}  // namespace megatts::e2e

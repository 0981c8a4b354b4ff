// raw_websocket: a WebSocket client that writes frames byte for byte and reads the server's
// frames as they are, for the conformance tests (RFC 6455, the Autobahn|Testsuite case
// families). It can send what a well-behaved client never would: unmasked frames, reserved
// bits and opcodes, fragmented or oversized control frames, continuation frames out of place,
// ill-formed UTF-8, bad close codes, non-minimal lengths, any of it cut into small writes.
//
// Contract: connect() opens a TCP connection to 127.0.0.1:port and completes the opening
// handshake with the key of RFC 6455 §1.3 (so the accept value is the RFC's); it fails with
// the status line when the answer is not 101 or the accept value is wrong. http_exchange()
// sends raw request bytes and returns the response head, for handshake tests. read_frame()
// returns the next whole frame, or an error: `timed out` when none arrives in time, `closed`
// when the server ended the TCP connection. Frames from the server must not be masked (an
// error otherwise). Thread: one owner. Blocking: yes, every wait bounded by its timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/result.h"

namespace megatts::conformance {

namespace opcode {
inline constexpr std::uint8_t continuation = 0x0;
inline constexpr std::uint8_t text = 0x1;
inline constexpr std::uint8_t binary = 0x2;
inline constexpr std::uint8_t close = 0x8;
inline constexpr std::uint8_t ping = 0x9;
inline constexpr std::uint8_t pong = 0xA;
}  // namespace opcode

struct ws_frame {
    bool fin = true;
    std::uint8_t rsv = 0;  // RSV1 RSV2 RSV3 as bits 2 1 0
    std::uint8_t opcode = 0;
    std::string payload;
};

struct frame_options {
    bool fin = true;
    std::uint8_t rsv = 0;
    bool masked = true;
    // 0: the minimal length encoding; 126 or 127: the 16- or 64-bit one even when shorter would do.
    std::uint8_t length_form = 0;
    // Write the frame in pieces of this many bytes (0: all at once).
    std::size_t write_chunk = 0;
};

// Error messages of read_frame for its two expected outcomes.
inline constexpr std::string_view timed_out = "timed out";
inline constexpr std::string_view closed = "closed";

// A frame as bytes: header, masking key (a fixed one) and the (masked) payload.
std::string encode_frame(std::uint8_t opcode, std::string_view payload, const frame_options& options = {});

// The payload of a close frame: the code (big-endian), then the reason.
std::string close_payload(std::uint16_t code, std::string_view reason = {});

class raw_websocket {
public:
    static result<raw_websocket> connect(std::uint16_t port, const std::vector<std::string>& extra_headers = {});
    // Sends `request` on a new connection; the response's head (status line and headers).
    static result<std::string> http_exchange(std::uint16_t port, std::string_view request,
                                             std::chrono::milliseconds timeout);

    raw_websocket(raw_websocket&& other) noexcept;
    raw_websocket& operator=(raw_websocket&& other) noexcept;
    raw_websocket(const raw_websocket&) = delete;
    raw_websocket& operator=(const raw_websocket&) = delete;
    ~raw_websocket();

    // The response head of the opening handshake.
    const std::string& handshake() const { return handshake_; }

    result<void> send_frame(std::uint8_t opcode, std::string_view payload, const frame_options& options = {});
    // Raw bytes, in pieces of `chunk` bytes when it is not 0.
    result<void> send_bytes(std::string_view bytes, std::size_t chunk = 0);
    result<ws_frame> read_frame(std::chrono::milliseconds timeout);
    // Half-closes the client's side (TCP FIN), as a client does after the closing handshake.
    void shutdown_send();

private:
    explicit raw_websocket(int fd) : fd_(fd) {}
    result<void> fill(std::size_t bytes, std::chrono::steady_clock::time_point deadline);

    int fd_ = -1;
    std::string handshake_;
    std::string buffered_;  // read from the socket, not yet returned
};

}  // namespace megatts::conformance

#include "tests/conformance/raw_websocket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

namespace megatts::conformance {
namespace {

using clock = std::chrono::steady_clock;

// RFC 6455 §1.3: this key's accept value is known, so the handshake is checked without SHA-1.
constexpr std::string_view rfc_key = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr std::string_view rfc_accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
constexpr std::array<std::uint8_t, 4> mask_key = {0x37, 0xfa, 0x21, 0x3d};
constexpr auto handshake_timeout = std::chrono::seconds(10);

error failure(std::string what) { return make_error(error_kind::io, std::move(what)); }

error system_failure(const char* call) { return failure(std::string(call) + ": " + std::strerror(errno)); }

result<int> open_connection(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return system_failure("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        const auto e = system_failure("connect");
        ::close(fd);
        return e;
    }
    const int one = 1;  // small writes leave at once, so that "in pieces" means what it says
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

result<void> write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return system_failure("send");
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

// Reads from `fd` into `buffer` until `done(buffer)` or the deadline.
template <class Done>
result<void> read_until(int fd, std::string& buffer, clock::time_point deadline, Done done) {
    char chunk[16384];
    while (!done(buffer)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) return failure(std::string(timed_out));
        pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left));
        if (ready < 0 && errno != EINTR) return system_failure("poll");
        if (ready <= 0) continue;
        const auto n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ECONNRESET) return failure(std::string(closed));
        if (n < 0) return system_failure("recv");
        if (n == 0) return failure(std::string(closed));
        buffer.append(chunk, static_cast<std::size_t>(n));
    }
    return {};
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

std::string encode_frame(std::uint8_t op, std::string_view payload, const frame_options& options) {
    std::string frame;
    frame += static_cast<char>((options.fin ? 0x80 : 0) | ((options.rsv & 7) << 4) | (op & 0x0f));
    const std::uint8_t mask_bit = options.masked ? 0x80 : 0;
    const std::uint64_t n = payload.size();
    const std::uint8_t form = options.length_form ? options.length_form : n < 126 ? 0 : n <= 0xffff ? 126 : 127;
    if (form == 0) {
        frame += static_cast<char>(mask_bit | n);
    } else if (form == 126) {
        frame += static_cast<char>(mask_bit | 126);
        frame += static_cast<char>(n >> 8);
        frame += static_cast<char>(n & 0xff);
    } else {
        frame += static_cast<char>(mask_bit | 127);
        for (int shift = 56; shift >= 0; shift -= 8) frame += static_cast<char>((n >> shift) & 0xff);
    }
    if (options.masked) frame.append(reinterpret_cast<const char*>(mask_key.data()), mask_key.size());
    for (std::size_t i = 0; i < payload.size(); ++i)
        frame += options.masked ? static_cast<char>(payload[i] ^ static_cast<char>(mask_key[i % 4])) : payload[i];
    return frame;
}

std::string close_payload(std::uint16_t code, std::string_view reason) {
    std::string payload;
    payload += static_cast<char>(code >> 8);
    payload += static_cast<char>(code & 0xff);
    payload += reason;
    return payload;
}

result<raw_websocket> raw_websocket::connect(std::uint16_t port, const std::vector<std::string>& extra_headers) {
    auto fd = open_connection(port);
    if (!fd) return fd.err();
    raw_websocket ws(*fd);
    std::string request = "GET /v1/tts HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                          "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + std::string(rfc_key) +
                          "\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: megatts.v1\r\n";
    for (const auto& header : extra_headers) request += header + "\r\n";
    request += "\r\n";
    MEGATTS_TRY(write_all(ws.fd_, request));
    std::string received;
    MEGATTS_TRY(read_until(ws.fd_, received, clock::now() + handshake_timeout,
                           [](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; }));
    const auto end = received.find("\r\n\r\n") + 4;
    ws.handshake_ = received.substr(0, end);
    ws.buffered_ = received.substr(end);  // frames the server sent right after the 101
    const auto status = ws.handshake_.substr(0, ws.handshake_.find("\r\n"));
    if (!status.starts_with("HTTP/1.1 101")) return failure("the handshake was answered " + status);
    if (lower(ws.handshake_).find("sec-websocket-accept: " + lower(rfc_accept)) == std::string::npos)
        return failure("the handshake's Sec-WebSocket-Accept is not RFC 6455's: " + ws.handshake_);
    return ws;
}

result<std::string> raw_websocket::http_exchange(std::uint16_t port, std::string_view request,
                                                 std::chrono::milliseconds timeout) {
    auto fd = open_connection(port);
    if (!fd) return fd.err();
    raw_websocket ws(*fd);
    MEGATTS_TRY(write_all(ws.fd_, request));
    std::string received;
    MEGATTS_TRY(read_until(ws.fd_, received, clock::now() + timeout,
                           [](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; }));
    return received.substr(0, received.find("\r\n\r\n") + 4);
}

raw_websocket::raw_websocket(raw_websocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      handshake_(std::move(other.handshake_)),
      buffered_(std::move(other.buffered_)) {}

raw_websocket& raw_websocket::operator=(raw_websocket&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        handshake_ = std::move(other.handshake_);
        buffered_ = std::move(other.buffered_);
    }
    return *this;
}

raw_websocket::~raw_websocket() {
    if (fd_ >= 0) ::close(fd_);
}

result<void> raw_websocket::send_frame(std::uint8_t op, std::string_view payload, const frame_options& options) {
    return send_bytes(encode_frame(op, payload, options), options.write_chunk);
}

result<void> raw_websocket::send_bytes(std::string_view bytes, std::size_t chunk) {
    if (chunk == 0) return write_all(fd_, bytes);
    for (std::size_t at = 0; at < bytes.size(); at += chunk) MEGATTS_TRY(write_all(fd_, bytes.substr(at, chunk)));
    return {};
}

result<void> raw_websocket::fill(std::size_t bytes, clock::time_point deadline) {
    return read_until(fd_, buffered_, deadline, [bytes](const std::string& b) { return b.size() >= bytes; });
}

result<ws_frame> raw_websocket::read_frame(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    MEGATTS_TRY(fill(2, deadline));
    const auto byte = [this](std::size_t i) { return static_cast<std::uint8_t>(buffered_[i]); };
    ws_frame frame{.fin = (byte(0) & 0x80) != 0,
                   .rsv = static_cast<std::uint8_t>((byte(0) >> 4) & 7),
                   .opcode = static_cast<std::uint8_t>(byte(0) & 0x0f)};
    if (byte(1) & 0x80) return failure("the server sent a masked frame");
    std::uint64_t length = byte(1) & 0x7f;
    std::size_t header = 2;
    if (length >= 126) {
        const std::size_t extra = length == 126 ? 2 : 8;
        MEGATTS_TRY(fill(2 + extra, deadline));
        length = 0;
        for (std::size_t i = 0; i < extra; ++i) length = (length << 8) | byte(2 + i);
        header += extra;
    }
    if (length > (std::uint64_t{1} << 24)) return failure("the server announced a frame of " + std::to_string(length) + " bytes");
    MEGATTS_TRY(fill(header + length, deadline));
    frame.payload = buffered_.substr(header, length);
    buffered_.erase(0, header + length);
    return frame;
}

void raw_websocket::shutdown_send() { ::shutdown(fd_, SHUT_WR); }

}  // namespace megatts::conformance

#include "daemon/bench_latency_client.h"

#include <optional>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <nlohmann/json.hpp>

#include "pipeline/telemetry/ttfa_mark.h"

namespace megatts {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using clock = std::chrono::steady_clock;
using json = nlohmann::json;

double ms_since(clock::time_point from, clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

struct bench_latency_client::impl {
    asio::io_context io;
    websocket::stream<beast::tcp_stream> ws{io};
    beast::flat_buffer buffer;
    ready_info ready;

    // Runs one asynchronous operation to its end or `timeout` (the stream's own timer closes
    // the socket, which ends the operation with an error).
    template <class Start>
    beast::error_code bounded(std::chrono::seconds timeout, Start start) {
        beast::get_lowest_layer(ws).expires_after(timeout);
        std::optional<beast::error_code> result;
        start([&](beast::error_code ec, std::size_t = 0) { result = ec; });
        io.restart();
        io.run();
        return result.value_or(beast::error::timeout);
    }

    result<void> send(const json& message, std::chrono::seconds timeout) {
        const std::string text = message.dump();
        ws.text(true);
        if (auto ec = bounded(timeout, [&](auto done) { ws.async_write(asio::buffer(text), done); }))
            return make_error(error_kind::unavailable, "bench latency: sending failed: " + ec.message());
        return {};
    }

    // The next message: binary (audio) or the parsed JSON event.
    result<std::optional<json>> receive(std::chrono::seconds timeout) {
        buffer.consume(buffer.size());
        if (auto ec = bounded(timeout, [&](auto done) { ws.async_read(buffer, done); }))
            return make_error(error_kind::unavailable, "bench latency: reading failed: " + ec.message());
        if (!ws.got_text()) return std::optional<json>{};
        auto event = json::parse(beast::buffers_to_string(buffer.data()), nullptr, false);
        if (event.is_discarded() || !event.is_object())
            return make_error(error_kind::mismatch, "bench latency: the server sent a text message that is not JSON");
        return std::optional<json>{std::move(event)};
    }
};

bench_latency_client::bench_latency_client(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
bench_latency_client::~bench_latency_client() = default;

const ready_info& bench_latency_client::ready() const { return impl_->ready; }

result<std::unique_ptr<bench_latency_client>> bench_latency_client::connect(const std::string& host,
                                                                            std::uint16_t port,
                                                                            const std::string& path,
                                                                            std::chrono::seconds timeout) {
    const auto deadline = clock::now() + timeout;
    std::string last_error;
    for (;;) {
        auto p = std::make_unique<impl>();
        asio::ip::tcp::resolver resolver(p->io);
        beast::error_code ec;
        const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
        if (ec) return make_error(error_kind::invalid_input, "bench latency: cannot resolve " + host + ": " + ec.message());
        ec = p->bounded(timeout, [&](auto done) {
            beast::get_lowest_layer(p->ws).async_connect(endpoints, [done](beast::error_code e, const auto&) { done(e); });
        });
        if (!ec) ec = p->bounded(timeout, [&](auto done) { p->ws.async_handshake(host, path, done); });
        if (!ec) {
            // The ready event comes first (PROTOCOL.md §1).
            auto first = p->receive(timeout);
            if (!first) return first.err();
            if (!*first || (**first).value("type", "") != "ready")
                return make_error(error_kind::mismatch, "bench latency: the server's first message is not `ready`");
            p->ready = {(**first).value("model", ""), (**first).value("synthetic", false)};
            return std::unique_ptr<bench_latency_client>(new bench_latency_client(std::move(p)));
        }
        last_error = ec.message();
        if (clock::now() + std::chrono::milliseconds(100) >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return make_error(error_kind::unavailable, "bench latency: no WebSocket session at ws://" + host + ":" +
                                                   std::to_string(port) + path + " within " +
                                                   std::to_string(timeout.count()) + " s (" + last_error + ")");
}

result<latency_sample> bench_latency_client::speak(const std::vector<std::string>& chunks, bool whole,
                                                   const std::string& voice, std::uint64_t seed,
                                                   std::chrono::seconds timeout) {
    auto& p = *impl_;
    if (chunks.empty()) return make_error(error_kind::invalid_input, "bench latency: no text to speak");
    json start = {{"type", "start"},  {"protocol", "megatts.v1"}, {"voice", voice},
                  {"format", "opus"}, {"sampling", {{"seed", seed}}}};
    if (whole) {
        start["text"] = chunks.front();
        start["end"] = true;
    }
    const auto sent = clock::now();
    MEGATTS_TRY(p.send(start, timeout));
    if (!whole) {
        for (std::size_t i = 0; i < chunks.size(); ++i) {
            json text = {{"type", "text"}, {"text", chunks[i]}};
            if (i + 1 == chunks.size()) text["end"] = true;
            MEGATTS_TRY(p.send(text, timeout));
        }
    }
    latency_sample s;
    std::optional<clock::time_point> first_audio;
    bool have_metrics = false;
    for (;;) {
        auto message = p.receive(timeout);
        if (!message) return message.err();
        if (!*message) {
            if (!first_audio) first_audio = clock::now();
            continue;
        }
        const json& e = **message;
        const std::string type = e.value("type", "");
        if (type == "error")
            return make_error(error_kind::unavailable, "bench latency: the server answered " + e.value("code", "") +
                                                           ": " + e.value("message", ""));
        if (type == "metrics") {
            have_metrics = true;
            s.server_ttfa_ms = e.value("server_ttfa_ms", 0.0);
            const auto& marks = e.at("marks");
            for (const auto mark : k_ttfa_marks) {
                const std::string name(ttfa_mark_name(mark));
                if (marks.contains(name)) s.marks.emplace_back(name, marks.at(name).get<double>());
            }
        } else if (type == "done") {
            if (e.value("reason", "") == "error" || e.value("reason", "") == "cancelled")
                return make_error(error_kind::unavailable, "bench latency: the utterance ended " + e.value("reason", ""));
            if (!first_audio || !have_metrics)
                return make_error(error_kind::mismatch, "bench latency: an utterance ended without audio or metrics");
            s.client_ttfa_ms = ms_since(sent, *first_audio);
            s.frames = e.value("frames", 0);
            s.audio_ms = e.value("audio_ms", 0.0);
            s.rtf = e.value("rtf", 0.0);
            s.layout = e.value("layout", "");
            return s;
        }
    }
}

}  // namespace megatts

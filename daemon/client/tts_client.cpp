#include "daemon/client/tts_client.h"

#include <optional>

#include <boost/asio/io_context.hpp>

namespace megatts::client {

struct tts_client::state {
    boost::asio::io_context ioc;
    tts_connection connection{ioc.get_executor()};

    // Runs one asynchronous operation to completion within `timeout`; past it the socket is
    // dropped, which completes the operation with an error. The outcome lives in a shared
    // slot, so a handler that runs late never writes into a finished call's frame.
    template <class T, class Initiate>
    result<T> run(std::chrono::milliseconds timeout, Initiate&& initiate) {
        auto outcome = std::make_shared<std::optional<result<T>>>();
        ioc.restart();
        initiate([outcome](result<T> r) { outcome->emplace(std::move(r)); });
        ioc.run_for(timeout);
        if (!*outcome) {
            connection.abort();
            ioc.restart();
            ioc.run_for(std::chrono::seconds(1));
            return make_error(error_kind::unavailable, "timed out after " + std::to_string(timeout.count()) + " ms");
        }
        return std::move(**outcome);
    }
};

tts_client::tts_client(std::unique_ptr<state> s) : state_(std::move(s)) {}
tts_client::tts_client(tts_client&&) noexcept = default;
tts_client& tts_client::operator=(tts_client&&) noexcept = default;
tts_client::~tts_client() = default;

result<tts_client> tts_client::connect(const client_options& options) {
    auto s = std::make_unique<state>();
    auto connected =
        s->run<void>(options.timeout, [&](auto handler) { s->connection.async_connect(options, std::move(handler)); });
    if (!connected) return connected.err();
    return tts_client(std::move(s));
}

result<void> tts_client::send(const client_message& message, std::chrono::milliseconds timeout) {
    return send_raw(encode_client_message(message), false, timeout);
}

result<void> tts_client::send_raw(const std::string& payload, bool binary, std::chrono::milliseconds timeout) {
    return state_->run<void>(timeout,
                             [&](auto handler) { state_->connection.async_send(payload, binary, std::move(handler)); });
}

result<received> tts_client::receive(std::chrono::milliseconds timeout) {
    return state_->run<received>(timeout, [&](auto handler) { state_->connection.async_receive(std::move(handler)); });
}

result<void> tts_client::close(std::chrono::milliseconds timeout) {
    return state_->run<void>(timeout, [&](auto handler) { state_->connection.async_close(std::move(handler)); });
}

void tts_client::drop() { state_->connection.abort(); }

}  // namespace megatts::client

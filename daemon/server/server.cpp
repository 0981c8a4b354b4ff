#include "daemon/server/server.h"

#include <csignal>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace megatts {
namespace {

// How often a drain checks whether the sessions are gone, and how long closed sessions get
// for their close handshake once the drain budget is spent.
constexpr std::chrono::milliseconds drain_poll{100};
constexpr std::chrono::seconds close_grace{2};

}  // namespace

result<std::unique_ptr<server>> server::create(server_context& context, std::optional<int> inherited_fd) {
    std::unique_ptr<server> s(new server(context));
    auto l = inherited_fd ? listener::adopt(s->ioc_, *inherited_fd, context)
                          : listener::create(s->ioc_, context.config().server.listen, context);
    if (!l) return l.err();
    s->listener_ = std::move(*l);
    return s;
}

server::server(server_context& context)
    : context_(context), signals_(ioc_, SIGINT, SIGTERM), drain_timer_(ioc_) {}

server::~server() {
    ioc_.stop();
    for (auto& t : threads_)
        if (t.joinable()) t.join();
}

void server::start(int threads) {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        spdlog::info("signal {}", signal);
        drain();
    });
    listener_->run();
    threads_.reserve(static_cast<std::size_t>(threads));
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
}

void server::request_stop() {
    boost::asio::post(ioc_, [this] {
        signals_.cancel();
        drain();
    });
}

void server::wait() {
    for (auto& t : threads_) t.join();
    threads_.clear();
}

void server::drain() {
    if (draining_.exchange(true)) return;  // a signal and request_stop() may race
    context_.set_draining();                 // unless failed: that phase is final
    spdlog::info("draining: {} session(s), for up to {} s", context_.sessions().size(),
                 context_.config().server.drain_timeout_s);
    if (on_drain_) on_drain_();
    // The listener stays open: new connections get their 503 (readiness, upgrades, speech),
    // which a balancer reads as "try elsewhere", instead of a refused connection.
    context_.sessions().for_each([](drainable& s) { s.go_away(); });
    // After an engine failure no utterance can progress: nothing is worth the drain budget.
    const auto budget = context_.failure().empty() ? std::chrono::seconds(context_.config().server.drain_timeout_s)
                                                   : std::chrono::seconds(0);
    poll_drained(std::chrono::steady_clock::now() + budget, false);
}

void server::poll_drained(std::chrono::steady_clock::time_point force_at, bool forced) {
    const auto now = std::chrono::steady_clock::now();
    if (context_.sessions().size() == 0 || (forced && now >= force_at)) {
        spdlog::info("drained; stopping");
        listener_->stop();  // runs inline: this is an io_context thread
        ioc_.stop();
        return;
    }
    if (!forced && now >= force_at) {
        spdlog::info("drain budget spent; closing {} session(s) with 1001", context_.sessions().size());
        context_.sessions().for_each([](drainable& s) { s.close_now(); });
        force_at = now + close_grace;
        forced = true;
    }
    drain_timer_.expires_after(drain_poll);
    drain_timer_.async_wait([this, force_at, forced](const boost::system::error_code& ec) {
        if (!ec) poll_drained(force_at, forced);
    });
}

}  // namespace megatts

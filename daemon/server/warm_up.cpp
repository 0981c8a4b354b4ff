#include "daemon/server/warm_up.h"

#include <future>
#include <memory>
#include <mutex>

namespace megatts {
namespace {

// Collects the warm-up utterance's end; hands every chunk straight back as sent.
class warm_up_events final : public session_events {
public:
    void attach(std::weak_ptr<tts_session> session) { session_ = std::move(session); }
    std::future<result<int>> outcome() { return outcome_.get_future(); }

    void on_started(const utterance_started&) override {}
    void on_audio(const audio_chunk& chunk) override {
        ++chunks;
        if (auto session = session_.lock()) session->audio_sent(chunk.receipt, true);
    }
    void on_metrics(const utterance_metrics&) override {}
    void on_done(const utterance_done& done) override { settle(done.frames); }
    void on_stall(const stall_notice&) override {}
    void on_error(std::uint32_t, const session_error& error) override {
        settle(make_error(error_kind::internal, "warm-up utterance failed: " + std::string(session_errc_name(error.code)) +
                                                    ": " + error.message));
    }

    int chunks = 0;

private:
    void settle(result<int> value) {
        std::call_once(settled_, [&] { outcome_.set_value(std::move(value)); });
    }

    std::weak_ptr<tts_session> session_;
    std::promise<result<int>> outcome_;
    std::once_flag settled_;
};

}  // namespace

result<warm_up_report> warm_up(tts_service& service, io_strand strand, const std::string& voice,
                               const std::string& text, int max_frames, std::chrono::seconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    auto events = std::make_shared<warm_up_events>();
    auto outcome = events->outcome();
    auto opened = service.open_session(std::make_shared<asio_strand>(std::move(strand)), events);
    if (!opened) return make_error(error_kind::unavailable, "warm-up: " + opened.err().message);
    std::shared_ptr<tts_session> session = std::move(*opened);
    events->attach(session);

    utterance_options options;
    options.voice = voice;
    options.max_frames = max_frames;
    auto status = session->start(options);
    if (status) status = session->text(text, text_end::end);
    if (!status) return make_error(error_kind::invalid_input, "warm-up: " + status.err().message);

    if (outcome.wait_for(timeout) != std::future_status::ready) {
        session->close();
        return make_error(error_kind::unavailable,
                          "warm-up utterance did not finish within " + std::to_string(timeout.count()) + " s");
    }
    auto frames = outcome.get();
    session->close();
    if (!frames) return frames.err();
    return warm_up_report{
        .frames = *frames,
        .chunks = events->chunks,
        .milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()};
}

}  // namespace megatts

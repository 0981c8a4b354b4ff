// engine_job: one utterance as the engine sees it: who asked (header, client), what for
// (voice, language, sampling, layout, frame cap) and its chat-template ids, which the session
// keeps appending while the text arrives (streaming layout) and then closes.
//
// Contract: made by the session on its strand and handed to engine::submit(). add_ids() is
// called on the session's strand; the engine thread reads concurrently (one mutex; ids() copies,
// for the non-streaming prompt only; id_at() is O(1)). The ids arrive in order and the last
// call, flagged, brings the template's tail with them and closes the job in one step, so the
// engine never sees tail ids of an open job. The ids are bounded by the session's
// max_text_bytes (at most one id per byte, plus the template's). The client is held weakly: a
// session that is gone reads as cancelled. abandon() (any thread) withdraws this job alone, for
// an utterance that failed while its session goes on; the engine drops it at its next round.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "pipeline/engine/engine_client.h"
#include "pipeline/graph/frame_header.h"
#include "pipeline/model/generation_setup.h"
#include "pipeline/model/prompt_layout.h"

namespace megatts {

struct engine_request {
    std::string voice;
    std::string language;
    sampling_request sampling;
    text_layout layout = text_layout::non_streaming;
    int max_frames = 0;  // 0: the model's max_new_tokens
    bool paced = true;   // a listener plays it as it arrives: held to the engine's lead limit
};

class engine_job {
public:
    engine_job(frame_header header, engine_request request, std::weak_ptr<engine_client> client);

    const frame_header& header() const { return header_; }
    const engine_request& request() const { return request_; }
    std::shared_ptr<engine_client> client() const { return client_.lock(); }

    void abandon() { abandoned_.store(true, std::memory_order_relaxed); }
    bool abandoned() const { return abandoned_.load(std::memory_order_relaxed); }

    void add_ids(std::span<const std::int32_t> ids, bool last);

    struct id_count {
        std::size_t ids = 0;  // template ids so far (role ids, text tokens, and the tail once closed)
        bool closed = false;
    };
    id_count count() const;
    std::int32_t id_at(std::size_t index) const;  // index < count().ids
    std::vector<std::int32_t> ids() const;

private:
    frame_header header_;
    engine_request request_;
    std::weak_ptr<engine_client> client_;
    std::atomic<bool> abandoned_{false};
    mutable std::mutex mutex_;
    std::vector<std::int32_t> ids_;
    bool closed_ = false;
};

}  // namespace megatts

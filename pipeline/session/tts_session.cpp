#include "pipeline/session/tts_session.h"

#include <utility>

#include "pipeline/session/session_core.h"

namespace megatts {

tts_session::tts_session(std::shared_ptr<session_core> core) : core_(std::move(core)) {}

tts_session::~tts_session() { core_->close(); }

session_status tts_session::start(const utterance_options& options) { return core_->start(options); }

session_status tts_session::text(std::string_view chunk, text_end after) { return core_->text(chunk, after); }

session_status tts_session::flush() { return core_->close_text(text_end::flush); }

session_status tts_session::end() { return core_->close_text(text_end::end); }

void tts_session::cancel() { core_->cancel(); }

void tts_session::audio_sent(const audio_receipt& receipt, bool written) { core_->audio_sent(receipt, written); }

void tts_session::client_report(const client_playback_report& report) { core_->client_report(report); }

void tts_session::close() { core_->close(); }

std::uint64_t tts_session::id() const { return core_->id(); }

}  // namespace megatts

// tokenize_stage: turns an utterance's text, arriving in chunks, into the ids of its chat
// template (chat_template.h) as soon as each id is final (incremental_tokenizer.h): the head's
// ids and the text's as the text arrives, the rest of the text's and the tail's at the end. In
// all, exactly bpe_tokenizer::encode() of the whole template, which is what the prompt layout
// takes, however the text was cut.
//
// In: text_chunk (data), end_of_text (control). Out: text_tokens (data) with the ids that became
// final (none emitted when none did); on end_of_text the remaining ids, flagged last, then
// end_of_text. Text that is not UTF-8 (a chunk, or the text ending inside a character) emits
// an error_report (invalid_utf8) instead. Other frames pass unchanged.
// Thread, blocking, cancel: as stage.h. Holds the text not yet released (bounded by the
// session's max_text_bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/graph/stage.h"
#include "pipeline/text/incremental_tokenizer.h"

namespace megatts {

class tokenize_stage final : public stage {
public:
    explicit tokenize_stage(const bpe_tokenizer& tokenizer);

    std::string_view name() const override { return "tokenize"; }
    void process(frame f, frame_emitter& out) override;

private:
    static void release(const frame_header& header, std::vector<std::int32_t> ids, bool last, frame_emitter& out);

    incremental_tokenizer tokenizer_;
    bool head_pushed_ = false;
};

}  // namespace megatts

#include "pipeline/stages/tokenize_stage.h"

#include <string>
#include <utility>

#include "pipeline/stages/chat_template.h"

namespace megatts {
namespace {

frame invalid_utf8(const frame_header& header, const std::string& message) {
    return frame{header, error_report{{session_errc::invalid_utf8, message}}};
}

}  // namespace

tokenize_stage::tokenize_stage(const bpe_tokenizer& tokenizer) : tokenizer_(tokenizer) {}

void tokenize_stage::process(frame f, frame_emitter& out) {
    // The template's head goes in with the first text, so a chunk refused as bad UTF-8 leaves
    // the tokenizer exactly as it was.
    const std::string head = head_pushed_ ? std::string() : std::string(k_template_head);
    if (auto* chunk = std::get_if<text_chunk>(&f.payload)) {
        auto ids = tokenizer_.push(head + chunk->text);
        if (!ids) {
            out.emit(invalid_utf8(f.header, ids.err().message));
            return;
        }
        head_pushed_ = true;
        release(f.header, std::move(ids.value()), false, out);
        return;
    }
    if (std::holds_alternative<end_of_text>(f.payload)) {
        auto tail = tokenizer_.push(head + std::string(k_template_tail));
        auto rest = tail ? tokenizer_.finish() : tail;
        if (!rest) {
            out.emit(invalid_utf8(f.header, rest.err().message));
            return;
        }
        std::vector<std::int32_t> ids = std::move(tail.value());
        ids.insert(ids.end(), rest->begin(), rest->end());
        release(f.header, std::move(ids), true, out);
        out.emit(std::move(f));
        return;
    }
    out.emit(std::move(f));
}

void tokenize_stage::release(const frame_header& header, std::vector<std::int32_t> ids, bool last,
                             frame_emitter& out) {
    if (ids.empty() && !last) return;
    frame_header h = header;
    h.created = std::chrono::steady_clock::now();
    out.emit(frame{h, text_tokens{std::move(ids), last}});
}

}  // namespace megatts

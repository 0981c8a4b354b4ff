#include "pipeline/text/incremental_tokenizer.h"

#include <utf8proc.h>

#include <utility>

#include "pipeline/text/nfc.h"
#include "pipeline/text/utf8.h"

namespace megatts {
namespace {

// A position where one NFC run ends and the next begins, in the raw and in the normalized text.
struct run_boundary {
    std::size_t raw;
    std::size_t normalized;
};

char32_t code_point_at(std::string_view text, std::size_t at, std::size_t& length) {
    utf8proc_int32_t c = 0;
    length = static_cast<std::size_t>(
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                         static_cast<utf8proc_ssize_t>(text.size() - at), &c));
    return static_cast<char32_t>(c);
}

}  // namespace

incremental_tokenizer::incremental_tokenizer(const bpe_tokenizer& tokenizer)
    : tokenizer_(&tokenizer) {}

result<std::vector<std::int32_t>> incremental_tokenizer::push(std::string_view chunk) {
    const std::size_t kept = pending_.size();
    pending_.append(chunk);
    auto released = release();
    if (!released) pending_.resize(kept);
    return released;
}

result<std::vector<std::int32_t>> incremental_tokenizer::finish() {
    const std::string text = std::move(pending_);
    pending_.clear();
    return tokenizer_->encode(text);
}

result<std::vector<std::int32_t>> incremental_tokenizer::release() {
    std::string_view text = pending_;
    const std::size_t valid = utf8_valid_prefix_length(text);
    if (valid != text.size() && !utf8_truncated_sequence(text.substr(valid))) {
        return make_error(error_kind::invalid_input, "text chunk is not valid UTF-8");
    }
    text = text.substr(0, valid);

    // A token match before `open` is final: no later text can start a token earlier or make
    // this one longer. The text before it is then final too, whole.
    std::vector<std::int32_t> ids;
    const added_token_set& added = tokenizer_->added_tokens();
    std::size_t at = 0;
    std::size_t open = added.open_prefix_start(text, at);
    for (auto match = added.find(text, at); match && match->begin < open;
         match = added.find(text, at)) {
        MEGATTS_TRY(tokenizer_->encode_segment(text.substr(at, match->begin - at), ids));
        ids.push_back(match->id);
        at = match->begin + match->length;
        open = added.open_prefix_start(text, at);
    }
    auto released = release_final_prefix(text.substr(at, open - at), ids);
    if (!released) return released.err();
    pending_.erase(0, at + *released);
    return ids;
}

result<std::size_t> incremental_tokenizer::release_final_prefix(
    std::string_view segment, std::vector<std::int32_t>& out) const {
    // Normalize run by run: NFC of the runs concatenated is NFC of the text, and each run
    // boundary ties a raw position to a normalized one.
    std::string normalized;
    std::vector<run_boundary> boundaries;
    std::size_t run_start = 0;
    std::size_t length = 0;
    for (std::size_t at = 0; at < segment.size(); at += length) {
        const char32_t c = code_point_at(segment, at, length);
        if (at == 0 || !nfc_boundary_before(c)) continue;
        MEGATTS_TRY(append_nfc(segment.substr(run_start, at - run_start), normalized));
        boundaries.push_back({at, normalized.size()});
        run_start = at;
    }
    // The last run is held back, but its first character can serve as the regex's look-ahead
    // when NFC keeps it whatever follows.
    const std::size_t final_size = normalized.size();
    if (run_start < segment.size() && nfc_stable_start(code_point_at(segment, run_start, length))) {
        normalized.append(segment.substr(run_start, length));
    }

    auto pieces = tokenizer_->splitter().split(normalized, /*more_may_follow=*/true);
    if (!pieces) return pieces.err();
    // A release must end where a final piece and a run both end.
    std::size_t released_pieces = 0;
    std::size_t released_bytes = 0;
    std::size_t piece_end = 0;
    auto boundary = boundaries.begin();
    for (std::size_t i = 0; i < pieces->size(); ++i) {
        piece_end += (*pieces)[i].size();
        if (piece_end > final_size) break;
        while (boundary != boundaries.end() && boundary->normalized < piece_end) ++boundary;
        if (boundary != boundaries.end() && boundary->normalized == piece_end) {
            released_pieces = i + 1;
            released_bytes = boundary->raw;
        }
    }
    for (std::size_t i = 0; i < released_pieces; ++i) {
        tokenizer_->model().encode((*pieces)[i], out);
    }
    return released_bytes;
}

}  // namespace megatts

// Fuzz target: arbitrary bytes as text through the tokenizer of the shipped Qwen3-TTS
// vocabulary (data/tokenizer), whole (bpe_tokenizer::encode) and in chunks
// (incremental_tokenizer, as text arrives over the WebSocket). The first byte picks the chunk
// length (1..16 bytes), the rest is the text.
// Properties: never crashes; well-formed UTF-8 always tokenizes, anything else fails with
// invalid_input (in encode, and in a push or finish of the incremental tokenizer); chunked
// ids equal whole ids; the ids decode to well-formed UTF-8.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pipeline/text/bpe_tokenizer.h"
#include "pipeline/text/incremental_tokenizer.h"
#include "pipeline/text/utf8.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

namespace {

const bpe_tokenizer& tokenizer() {
    static const bpe_tokenizer instance = [] {
        auto loaded = bpe_tokenizer::load(MEGATTS_DATA_DIR "/tokenizer");
        FUZZ_CHECK(loaded.ok(), "the shipped tokenizer loads");
        return std::move(*loaded);
    }();
    return instance;
}

// The ids of `text` pushed `chunk` bytes at a time, or nothing once a push or finish fails.
std::optional<std::vector<std::int32_t>> chunked(std::string_view text, std::size_t chunk) {
    incremental_tokenizer incremental(tokenizer());
    std::vector<std::int32_t> ids;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
        auto released = incremental.push(text.substr(at, chunk));
        if (!released) {
            FUZZ_CHECK(released.err().kind == error_kind::invalid_input, "a chunk fails as invalid_input");
            (void)incremental.finish();
            return std::nullopt;
        }
        ids.insert(ids.end(), released->begin(), released->end());
    }
    auto rest = incremental.finish();
    if (!rest) {
        FUZZ_CHECK(rest.err().kind == error_kind::invalid_input, "finish fails as invalid_input");
        return std::nullopt;
    }
    ids.insert(ids.end(), rest->begin(), rest->end());
    return ids;
}

}  // namespace

// Loading the vocabulary takes seconds under ASan: done before the first input, so that it
// does not count against the per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    tokenizer();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = 1 + data[0] % 16;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    const bool well_formed = utf8_valid_prefix_length(text) == text.size();

    const auto whole = tokenizer().encode(text);
    const auto pieces = chunked(text, chunk);
    if (!well_formed) {
        FUZZ_CHECK(!whole && whole.err().kind == error_kind::invalid_input, "ill-formed UTF-8 fails as invalid_input");
        FUZZ_CHECK(!pieces, "ill-formed UTF-8 fails in chunks too");
        return 0;
    }
    FUZZ_CHECK(whole.ok(), "well-formed UTF-8 tokenizes");
    FUZZ_CHECK(pieces.has_value(), "well-formed UTF-8 tokenizes in chunks");
    FUZZ_CHECK(*pieces == *whole, "chunked ids equal whole ids");
    const auto decoded = tokenizer().decode(*whole);
    FUZZ_CHECK(decoded.ok(), "the ids decode");
    FUZZ_CHECK(utf8_valid_prefix_length(*decoded) == decoded->size(), "the ids decode to UTF-8");
    return 0;
}

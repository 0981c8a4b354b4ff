#include "pipeline/text/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace megatts {
namespace {

// One alternative per line; [\t-\r\x{85}\p{Z}] is \s (see the header).
constexpr std::string_view pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d))"
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N})"
    R"(| ?[^\t-\r\x{85}\p{Z}\p{L}\p{N}]+[\r\n]*)"
    R"(|[\t-\r\x{85}\p{Z}]*[\r\n]+)"
    R"(|[\t-\r\x{85}\p{Z}]+(?![^\t-\r\x{85}\p{Z}]))"
    R"(|[\t-\r\x{85}\p{Z}]+)";

std::string pcre2_message(int code) {
    std::array<PCRE2_UCHAR, 256> buffer{};
    pcre2_get_error_message(code, buffer.data(), buffer.size());
    return reinterpret_cast<const char*>(buffer.data());
}

struct match_data_deleter {
    void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

void pre_tokenizer::code_deleter::operator()(pcre2_real_code_8* code) const {
    pcre2_code_free(code);
}

pre_tokenizer::pre_tokenizer(std::unique_ptr<pcre2_real_code_8, code_deleter> code)
    : code_(std::move(code)) {}

result<pre_tokenizer> pre_tokenizer::create() {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    // No JIT: the interpreter is fast enough for prompt-sized text, and JIT needs writable
    // executable memory, which a hardened service (MemoryDenyWriteExecute) does not have.
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
    if (code == nullptr) {
        return make_error(error_kind::internal,
                          "pre-tokenizer regex does not compile at offset " +
                              std::to_string(error_offset) + ": " + pcre2_message(error_code));
    }
    return pre_tokenizer(std::unique_ptr<pcre2_real_code_8, code_deleter>(code));
}

result<std::vector<std::string_view>> pre_tokenizer::split(std::string_view text,
                                                           bool more_may_follow) const {
    const std::unique_ptr<pcre2_match_data, match_data_deleter> match(
        pcre2_match_data_create_from_pattern(code_.get(), nullptr));
    if (!match) return make_error(error_kind::internal, "pre-tokenizer: out of memory");
    const PCRE2_SPTR subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    // The callers pass well-formed UTF-8 (checked once per text, not once per piece).
    // Anchored: the pieces tile the text, so each one starts where the previous one ended.
    const std::uint32_t options =
        PCRE2_NO_UTF_CHECK | PCRE2_ANCHORED | (more_may_follow ? PCRE2_PARTIAL_HARD : 0);
    std::vector<std::string_view> pieces;
    std::size_t at = 0;
    while (at < text.size()) {
        const int rc = pcre2_match(code_.get(), subject, text.size(), at, options, match.get(),
                                   nullptr);
        if (rc == PCRE2_ERROR_PARTIAL) break;
        if (rc < 0) {
            return make_error(error_kind::internal, "pre-tokenizer regex failed at byte " +
                                                        std::to_string(at) + ": " +
                                                        pcre2_message(rc));
        }
        const std::size_t end = pcre2_get_ovector_pointer(match.get())[1];
        pieces.push_back(text.substr(at, end - at));
        at = end;
    }
    return pieces;
}

}  // namespace megatts

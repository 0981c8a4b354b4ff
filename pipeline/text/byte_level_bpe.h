// byte_level_bpe: GPT-2 style byte-level BPE over the vocabulary and merge list of vocab.json
// and merges.txt, the model of Hugging Face's Qwen2Tokenizer.
//
// Both files spell a token's bytes with GPT-2's byte-to-unicode map (byte 0x20 is "Ġ", ...);
// load() maps them back to raw bytes once, so encoding runs on the bytes of a piece directly.
// A piece starts as one symbol per byte; then, as long as some adjacent pair of symbols is in
// the merge list, the pair of lowest rank (leftmost on ties) is merged. The result equals the
// reference algorithm that merges every occurrence of the best pair per round, in
// O(n log n) rather than O(n^2) for a piece of n bytes.
//
// In: one piece of pre-tokenized text (any bytes). Out: token ids, appended.
// Thread: immutable after load(); encode() and token_bytes() are const and safe on many threads
// at once. Blocking: load() reads both files; nothing else blocks. Errors (load() only, each
// naming the file and, for merges.txt, the line): a missing or unreadable file; vocab.json that
// is not an object of token -> id, with ids other than 0..N-1, a token that is not byte-level,
// or a missing single-byte token; a merge line that is not two tokens of the vocabulary whose
// concatenation is one too.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/common/result.h"

namespace megatts {

class byte_level_bpe {
public:
    static result<byte_level_bpe> load(const std::filesystem::path& vocab_json,
                                       const std::filesystem::path& merges_txt);

    // Appends the ids of `piece` to `out`.
    void encode(std::string_view piece, std::vector<std::int32_t>& out) const;

    // The raw bytes of a vocabulary token; nullopt for an id outside 0..size()-1.
    std::optional<std::string_view> token_bytes(std::int32_t id) const;

    std::int32_t size() const { return static_cast<std::int32_t>(token_bytes_.size()); }

private:
    struct merge {
        std::int32_t rank;
        std::int32_t merged_id;
    };

    byte_level_bpe() = default;

    const merge* find_merge(std::int32_t left, std::int32_t right) const;

    std::vector<std::string> token_bytes_;             // by id
    std::array<std::int32_t, 256> byte_ids_{};         // the single-byte tokens
    std::unordered_map<std::uint64_t, merge> merges_;  // key: left id << 32 | right id
};

}  // namespace megatts

#include "pipeline/text/byte_level_bpe.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

#include <nlohmann/json.hpp>

#include "pipeline/text/tokenizer_files.h"

namespace megatts {
namespace {

// GPT-2's bytes_to_unicode(), inverted: the byte that each code point below 0x144 stands for,
// or -1. Printable Latin-1 bytes stand for themselves; the other 68 bytes take the code points
// 0x100, 0x101, ... in byte order, so that every token is spelled with visible characters.
std::array<int, 0x144> byte_of_char() {
    std::array<int, 0x144> byte_of{};
    byte_of.fill(-1);
    int next_char = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
        const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                               (byte >= 0xAE && byte <= 0xFF);
        byte_of[static_cast<std::size_t>(printable ? byte : next_char++)] = byte;
    }
    return byte_of;
}

// The raw bytes that a token of vocab.json spells, or nullopt if it is not byte-level.
std::optional<std::string> unmap_spelling(std::string_view spelling) {
    static const std::array<int, 0x144> byte_of = byte_of_char();
    std::string bytes;
    std::size_t at = 0;
    while (at < spelling.size()) {
        utf8proc_int32_t c = -1;
        const utf8proc_ssize_t n =
            utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(spelling.data() + at),
                             static_cast<utf8proc_ssize_t>(spelling.size() - at), &c);
        if (n <= 0 || static_cast<std::size_t>(c) >= byte_of.size() ||
            byte_of[static_cast<std::size_t>(c)] < 0) {
            return std::nullopt;
        }
        bytes.push_back(static_cast<char>(byte_of[static_cast<std::size_t>(c)]));
        at += static_cast<std::size_t>(n);
    }
    return bytes;
}

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 |
           static_cast<std::uint32_t>(right);
}

}  // namespace

result<byte_level_bpe> byte_level_bpe::load(const std::filesystem::path& vocab_json,
                                            const std::filesystem::path& merges_txt) {
    const std::string vocab_name = vocab_json.string();
    const std::string merges_name = merges_txt.string();
    auto vocab = read_tokenizer_json(vocab_json);
    if (!vocab) return vocab.err();
    if (!vocab->is_object()) {
        return make_error(error_kind::invalid_input,
                          vocab_name + ": expected an object of token -> id");
    }

    byte_level_bpe bpe;
    bpe.token_bytes_.resize(vocab->size());
    std::vector<bool> seen(vocab->size());
    bpe.byte_ids_.fill(-1);
    // Keyed by the byte-to-unicode spelling, which is also how merges.txt names tokens. The
    // views point into `vocab`, which outlives the map.
    std::unordered_map<std::string_view, std::int32_t> id_of_spelling;
    id_of_spelling.reserve(vocab->size());
    for (const auto& [spelling, value] : vocab->items()) {
        const std::int64_t id = value.is_number_integer() ? value.get<std::int64_t>() : -1;
        if (id < 0 || id >= static_cast<std::int64_t>(seen.size()) ||
            seen[static_cast<std::size_t>(id)]) {
            return make_error(error_kind::invalid_input,
                              vocab_name + ": the ids are not 0.." +
                                  std::to_string(seen.size() - 1) + " (token '" + spelling +
                                  "' has " + value.dump() + ")");
        }
        std::optional<std::string> bytes = unmap_spelling(spelling);
        if (!bytes) {
            return make_error(error_kind::invalid_input,
                              vocab_name + ": token '" + spelling + "' is not byte-level");
        }
        seen[static_cast<std::size_t>(id)] = true;
        const auto token_id = static_cast<std::int32_t>(id);
        if (bytes->size() == 1) bpe.byte_ids_[static_cast<unsigned char>((*bytes)[0])] = token_id;
        bpe.token_bytes_[static_cast<std::size_t>(id)] = std::move(*bytes);
        id_of_spelling.emplace(spelling, token_id);
    }
    for (std::size_t byte = 0; byte < bpe.byte_ids_.size(); ++byte) {
        if (bpe.byte_ids_[byte] < 0) {
            return make_error(error_kind::invalid_input,
                              vocab_name + ": no token for the byte " + std::to_string(byte));
        }
    }

    auto merges = read_tokenizer_file(merges_txt);
    if (!merges) return merges.err();
    const std::string_view lines = *merges;
    std::int32_t rank = 0;
    std::size_t line_number = 0;
    for (std::size_t begin = 0; begin < lines.size();) {
        const std::size_t end = std::min(lines.find('\n', begin), lines.size());
        const std::string_view line = lines.substr(begin, end - begin);
        begin = end + 1;
        ++line_number;
        if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;
        const std::string where = merges_name + ":" + std::to_string(line_number) + ": ";
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
            return make_error(error_kind::invalid_input,
                              where + "expected two tokens separated by one space");
        }
        const std::string_view left = line.substr(0, space);
        const std::string_view right = line.substr(space + 1);
        const std::string merged = std::string(left) + std::string(right);
        const auto left_id = id_of_spelling.find(left);
        const auto right_id = id_of_spelling.find(right);
        const auto merged_id = id_of_spelling.find(merged);
        if (left_id == id_of_spelling.end() || right_id == id_of_spelling.end() ||
            merged_id == id_of_spelling.end()) {
            return make_error(error_kind::invalid_input,
                              where + "'" + std::string(line) + "' is not a merge of tokens of " +
                                  vocab_name);
        }
        // A repeated pair keeps its last rank, as in both Hugging Face implementations.
        bpe.merges_.insert_or_assign(pair_key(left_id->second, right_id->second),
                                     merge{rank++, merged_id->second});
    }
    return bpe;
}

const byte_level_bpe::merge* byte_level_bpe::find_merge(std::int32_t left,
                                                        std::int32_t right) const {
    const auto it = merges_.find(pair_key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
}

void byte_level_bpe::encode(std::string_view piece, std::vector<std::int32_t>& out) const {
    // The symbols form a linked list over the piece's bytes; a merge folds the right symbol
    // into the left one, so a symbol keeps its index (its position) for its whole life.
    constexpr std::size_t none = SIZE_MAX;
    struct symbol {
        std::int32_t id;  // -1 once merged into its left neighbour
        std::size_t prev;
        std::size_t next;
    };
    struct candidate {
        std::int32_t rank;
        std::size_t left;
        auto operator<=>(const candidate&) const = default;
    };

    const std::size_t n = piece.size();
    std::vector<symbol> symbols(n);
    for (std::size_t i = 0; i < n; ++i) {
        symbols[i] = {byte_ids_[static_cast<unsigned char>(piece[i])], i == 0 ? none : i - 1,
                      i + 1 < n ? i + 1 : none};
    }
    std::priority_queue<candidate, std::vector<candidate>, std::greater<>> queue;
    const auto consider = [&](std::size_t left) {
        const symbol& s = symbols[left];
        if (s.next == none) return;
        if (const merge* m = find_merge(s.id, symbols[s.next].id)) queue.push({m->rank, left});
    };
    for (std::size_t i = 0; i + 1 < n; ++i) consider(i);

    while (!queue.empty()) {
        const candidate top = queue.top();
        queue.pop();
        symbol& left = symbols[top.left];
        // Entries go stale when a neighbour merged first; ranks are unique per pair, so the
        // pair is still there exactly when its merge still has this rank.
        if (left.id < 0 || left.next == none) continue;
        symbol& right = symbols[left.next];
        const merge* m = find_merge(left.id, right.id);
        if (m == nullptr || m->rank != top.rank) continue;
        left.id = m->merged_id;
        left.next = right.next;
        if (right.next != none) symbols[right.next].prev = top.left;
        right.id = -1;
        if (left.prev != none) consider(left.prev);
        consider(top.left);
    }
    for (std::size_t i = n == 0 ? none : 0; i != none; i = symbols[i].next) {
        out.push_back(symbols[i].id);
    }
}

std::optional<std::string_view> byte_level_bpe::token_bytes(std::int32_t id) const {
    if (id < 0 || id >= size()) return std::nullopt;
    return token_bytes_[static_cast<std::size_t>(id)];
}

}  // namespace megatts

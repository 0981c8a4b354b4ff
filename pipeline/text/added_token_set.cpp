#include "pipeline/text/added_token_set.h"

#include <algorithm>
#include <set>

namespace megatts {

added_token_set::added_token_set(std::vector<std::pair<std::string, std::int32_t>> longest_first)
    : tokens_(std::move(longest_first)),
      longest_(tokens_.empty() ? 0 : tokens_.front().first.size()) {}

result<added_token_set> added_token_set::create(
    std::vector<std::pair<std::string, std::int32_t>> tokens) {
    std::stable_sort(tokens.begin(), tokens.end(), [](const auto& a, const auto& b) {
        return a.first.size() > b.first.size();
    });
    std::set<std::string_view> contents;
    std::set<std::int32_t> ids;
    for (const auto& [content, id] : tokens) {
        if (content.empty()) {
            return make_error(error_kind::invalid_input,
                              "added token " + std::to_string(id) + " is empty");
        }
        if (!contents.insert(content).second || !ids.insert(id).second) {
            return make_error(error_kind::invalid_input, "added token '" + content + "' (id " +
                                                             std::to_string(id) +
                                                             ") occurs twice");
        }
    }
    return added_token_set(std::move(tokens));
}

std::optional<added_token_set::match> added_token_set::find(std::string_view text,
                                                            std::size_t from) const {
    for (std::size_t at = from; at < text.size(); ++at) {
        const std::string_view rest = text.substr(at);
        for (const auto& [content, id] : tokens_) {
            if (rest.starts_with(content)) return match{at, content.size(), id};
        }
    }
    return std::nullopt;
}

std::size_t added_token_set::open_prefix_start(std::string_view text, std::size_t from) const {
    // A proper prefix of a token is shorter than the longest token.
    const std::size_t reach = longest_ == 0 ? 0 : longest_ - 1;
    const std::size_t first = std::max(from, text.size() > reach ? text.size() - reach : 0);
    for (std::size_t at = first; at < text.size(); ++at) {
        const std::string_view rest = text.substr(at);
        for (const auto& token : tokens_) {
            const std::string_view content = token.first;
            if (content.size() > rest.size() && content.starts_with(rest)) return at;
        }
    }
    return text.size();
}

std::optional<std::int32_t> added_token_set::id(std::string_view content) const {
    for (const auto& token : tokens_) {
        if (token.first == content) return token.second;
    }
    return std::nullopt;
}

std::optional<std::string_view> added_token_set::content(std::int32_t id) const {
    for (const auto& token : tokens_) {
        if (token.second == id) return token.first;
    }
    return std::nullopt;
}

}  // namespace megatts

#include "daemon/http/static_path.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

namespace megatts {
namespace {

error not_found(std::string_view target) {
    return make_error(error_kind::not_found, "no file for " + std::string(target.substr(0, 200)));
}

// Whether `path` is `root` or lies below it; both canonical.
bool inside(const std::filesystem::path& root, const std::filesystem::path& path) {
    auto r = root.begin();
    auto p = path.begin();
    for (; r != root.end(); ++r, ++p)
        if (p == path.end() || *r != *p) return false;
    return true;
}

}  // namespace

result<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        unsigned value = 0;
        const char* begin = text.data() + i + 1;
        const auto [end, ec] = std::from_chars(begin, begin + std::min<std::size_t>(2, text.size() - i - 1), value, 16);
        if (ec != std::errc{} || end != begin + 2 || value == 0)
            return make_error(error_kind::invalid_input, "bad percent-escape in a URL path");
        out += static_cast<char>(value);
        i += 2;
    }
    return out;
}

result<std::filesystem::path> resolve_static_path(const std::filesystem::path& canonical_root,
                                                  std::string_view target) {
    const std::string_view path_part = target.substr(0, target.find_first_of("?#"));
    if (path_part.empty() || path_part.front() != '/') return not_found(target);
    auto decoded = percent_decode(path_part);
    if (!decoded || decoded->find('\\') != std::string::npos) return not_found(target);
    std::string relative = decoded->substr(1);
    if (relative.empty() || relative.back() == '/') relative += "index.html";

    std::filesystem::path candidate = canonical_root;
    for (const auto& segment : std::filesystem::path(relative)) {
        if (segment == ".." || segment == "." || segment.empty()) return not_found(target);
        candidate /= segment;
    }
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(candidate, ec);
    if (ec || !inside(canonical_root, canonical) || !std::filesystem::is_regular_file(canonical, ec))
        return not_found(target);
    return canonical;
}

}  // namespace megatts

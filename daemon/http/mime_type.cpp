#include "daemon/http/mime_type.h"

#include <array>
#include <utility>

#include <boost/beast/core/string.hpp>

namespace megatts {
namespace {

constexpr auto types = std::to_array<std::pair<std::string_view, std::string_view>>({
    {".html", "text/html; charset=utf-8"},
    {".htm", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
    {".md", "text/markdown; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".webp", "image/webp"},
    {".ico", "image/vnd.microsoft.icon"},
    {".wasm", "application/wasm"},
    {".woff", "font/woff"},
    {".woff2", "font/woff2"},
    {".wav", "audio/wav"},
    {".ogg", "audio/ogg"},
    {".opus", "audio/ogg"},
    {".webmanifest", "application/manifest+json"},
});

}  // namespace

std::string_view mime_type(std::string_view extension) {
    for (const auto& [ext, type] : types)
        if (boost::beast::iequals(ext, extension)) return type;
    return "application/octet-stream";
}

}  // namespace megatts

#include "daemon/http/static_file_response.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>

#include "daemon/http/error_response.h"
#include "daemon/http/mime_type.h"
#include "daemon/http/static_path.h"

namespace megatts {
namespace {

template <class Body>
void set_file_headers(http::response<Body>& response, const std::filesystem::path& file, const std::string& etag,
                      bool keep_alive) {
    response.set(http::field::content_type, mime_type(file.extension().string()));
    response.set(http::field::etag, etag);
    response.set(http::field::cache_control, "no-cache");
    response.set("X-Content-Type-Options", "nosniff");
    response.keep_alive(keep_alive);
}

bool etag_matches(const http_request& request, const std::string& etag) {
    const auto header = request[http::field::if_none_match];
    return header == "*" || header.find(etag) != std::string_view::npos;
}

}  // namespace

std::string file_etag(std::uintmax_t size, std::int64_t modified_ns) {
    char text[64];
    std::snprintf(text, sizeof text, "\"%jx-%llx\"", size, static_cast<unsigned long long>(modified_ns));
    return text;
}

http::message_generator static_file_response(const http_request& request,
                                             const std::filesystem::path& canonical_root) {
    auto file = resolve_static_path(canonical_root, request.target());
    if (!file) return error_response(request, http::status::not_found, error_code::not_found, "not found");

    std::error_code ec;
    const auto size = std::filesystem::file_size(*file, ec);
    const auto modified = std::filesystem::last_write_time(*file, ec);
    if (ec) return error_response(request, http::status::not_found, error_code::not_found, "not found");
    const auto etag = file_etag(
        size, std::chrono::duration_cast<std::chrono::nanoseconds>(modified.time_since_epoch()).count());

    if (etag_matches(request, etag)) {
        http::response<http::empty_body> response{http::status::not_modified, request.version()};
        set_file_headers(response, *file, etag, request.keep_alive());
        return response;
    }
    if (request.method() == http::verb::head) {
        http::response<http::empty_body> response{http::status::ok, request.version()};
        set_file_headers(response, *file, etag, request.keep_alive());
        response.content_length(size);
        return response;
    }
    http::file_body::value_type body;
    boost::beast::error_code open_error;
    body.open(file->c_str(), boost::beast::file_mode::scan, open_error);
    if (open_error) return error_response(request, http::status::not_found, error_code::not_found, "not found");
    http::response<http::file_body> response{std::piecewise_construct, std::make_tuple(std::move(body)),
                                             std::make_tuple(http::status::ok, request.version())};
    set_file_headers(response, *file, etag, request.keep_alive());
    response.prepare_payload();
    return response;
}

}  // namespace megatts

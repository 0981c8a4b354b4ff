// static_file_response: the answer to GET or HEAD of a file of the page (PROTOCOL.md §8).
//
// Contract: resolves the target with resolve_static_path (404 for anything outside the root),
// then answers 200 with the file (file_body: streamed from disk, never loaded whole), its
// mime_type, Content-Length, an ETag made of size and modification time, and
// Cache-Control: no-cache (browsers revalidate each time, so a new page is never mixed with a
// stale module); 304 without a body when If-None-Match names the current ETag; HEAD gets the
// headers only. X-Content-Type-Options: nosniff keeps browsers from second-guessing the type.
// Thread: any; blocks on opening the file (local disk).
#pragma once

#include <filesystem>

#include <boost/beast/http/message_generator.hpp>

#include "daemon/http/http_types.h"

namespace megatts {

http::message_generator static_file_response(const http_request& request,
                                             const std::filesystem::path& canonical_root);

// The entity tag of a file of `size` bytes last written at `modified` (nanoseconds since the
// epoch), quoted as HTTP wants it.
std::string file_etag(std::uintmax_t size, std::int64_t modified_ns);

}  // namespace megatts

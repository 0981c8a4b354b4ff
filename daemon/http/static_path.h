// static_path: which file under the web root a request target names, refusing every target
// that could reach outside it (PROTOCOL.md §8).
//
// Contract: resolve_static_path(root, target) takes the request target as sent ("/a/b.js?x=1"),
// drops the query, percent-decodes the path, maps "/" and paths ending in "/" to their
// "index.html", and returns the canonical path of an existing regular file inside the canonical
// root. not_found for everything else: a target not starting with "/", an invalid or NUL
// percent-escape, a backslash, a ".." or "." segment, a file that does not exist, is not a
// regular file, or whose canonical path (symbolic links resolved) leaves the root. Refusals
// are deliberately indistinguishable, so a probe learns nothing about the file system.
// Thread: any; blocks on file-system metadata (stat, realpath) only.
#pragma once

#include <filesystem>
#include <string_view>

#include "kernels/common/result.h"

namespace megatts {

result<std::filesystem::path> resolve_static_path(const std::filesystem::path& canonical_root,
                                                  std::string_view target);

// Percent-decoding of a URL path; invalid_input for a bad escape or an escaped NUL.
result<std::string> percent_decode(std::string_view text);

}  // namespace megatts

// mime_type: the Content-Type of a static file of the page, by its extension.
//
// Contract: case-insensitive on the extension (with its dot, as std::filesystem gives it);
// text types carry "; charset=utf-8"; unknown extensions are application/octet-stream, which
// browsers never execute or render as a page. JavaScript must be text/javascript: browsers
// refuse ES modules served with another type. Pure; any thread.
#pragma once

#include <string_view>

namespace megatts {

std::string_view mime_type(std::string_view extension);

}  // namespace megatts

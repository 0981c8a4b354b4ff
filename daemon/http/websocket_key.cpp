#include "daemon/http/websocket_key.h"

#include <algorithm>
#include <cctype>

namespace megatts {

bool valid_websocket_key(std::string_view key) {
    constexpr std::size_t encoded_size = 24;  // 16 bytes in base64
    if (key.size() != encoded_size || !key.ends_with("==")) return false;
    const auto base64 = [](unsigned char c) { return std::isalnum(c) || c == '+' || c == '/'; };
    if (!std::all_of(key.begin(), key.end() - 2, base64)) return false;
    // The 22nd character holds the last 2 bits of byte 16 and 4 bits of padding, which are 0.
    return std::string_view("AQgw").find(key[21]) != std::string_view::npos;
}

}  // namespace megatts

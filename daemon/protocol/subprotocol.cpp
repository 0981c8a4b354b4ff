#include "daemon/protocol/subprotocol.h"

#include "daemon/protocol/protocol_version.h"

namespace megatts {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

subprotocol_offer negotiate_subprotocol(std::string_view offered) {
    if (trim(offered).empty()) return subprotocol_offer::none;
    while (!offered.empty()) {
        const auto comma = offered.find(',');
        if (trim(offered.substr(0, comma)) == protocol_version) return subprotocol_offer::accepted;
        if (comma == std::string_view::npos) break;
        offered.remove_prefix(comma + 1);
    }
    return subprotocol_offer::refused;
}

}  // namespace megatts

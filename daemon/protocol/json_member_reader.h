// json_member_reader: typed, range-checked reads of the members of one JSON object, for the
// protocol's decoders (client messages, server events, the HTTP speech request).
//
// Contract: each read returns the member's value, or nothing when it is absent (optional
// members) or wrong; a wrong member (another JSON type, a fraction where an integer is due, a
// value out of range) also records a bad_message error naming it, e.g. "start.sampling.top_p:
// must be in [0, 1]". Only the first problem is kept, so a decoder reads everything, then checks
// failure() once. Ranges are inclusive. The object must outlive the reader.
// Not thread-safe (one decoder at a time); never blocks; no exceptions escape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "daemon/protocol/error_code.h"

namespace megatts {

class json_member_reader {
public:
    // `path` prefixes member names in messages ("start", "start.sampling").
    json_member_reader(const nlohmann::ordered_json& object, std::string path);

    bool has(std::string_view name) const;
    std::optional<std::string> string(std::string_view name);
    std::optional<bool> boolean(std::string_view name);
    std::optional<std::int64_t> integer(std::string_view name, std::int64_t min, std::int64_t max);
    std::optional<double> number(std::string_view name, double min, double max);
    // A nested object member, or nothing (recording bad_message when it is not an object).
    const nlohmann::ordered_json* object(std::string_view name);
    // A member required by the message: records bad_message when it is absent.
    void require(std::string_view name);

    // Records a problem with member `name` (only the first problem is kept).
    void fail(std::string_view name, std::string_view why);
    // Keeps the first problem of a reader of a nested object, if this one has none yet.
    void adopt_failure(const json_member_reader& nested);
    const std::optional<protocol_error>& failure() const { return failure_; }
    const std::string& path() const { return path_; }

private:
    const nlohmann::ordered_json* member(std::string_view name) const;

    const nlohmann::ordered_json& object_;
    std::string path_;
    std::optional<protocol_error> failure_;
};

}  // namespace megatts

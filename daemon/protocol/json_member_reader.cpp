#include "daemon/protocol/json_member_reader.h"

#include <cmath>
#include <sstream>

namespace megatts {

json_member_reader::json_member_reader(const nlohmann::ordered_json& object, std::string path)
    : object_(object), path_(std::move(path)) {}

const nlohmann::ordered_json* json_member_reader::member(std::string_view name) const {
    const auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
}

bool json_member_reader::has(std::string_view name) const { return member(name) != nullptr; }

void json_member_reader::fail(std::string_view name, std::string_view why) {
    if (failure_) return;
    failure_ = protocol_error{error_code::bad_message, path_ + "." + std::string(name) + ": " + std::string(why)};
}

void json_member_reader::adopt_failure(const json_member_reader& nested) {
    if (!failure_) failure_ = nested.failure_;
}

void json_member_reader::require(std::string_view name) {
    if (!has(name)) fail(name, "is required");
}

std::optional<std::string> json_member_reader::string(std::string_view name) {
    const auto* v = member(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        fail(name, "must be a string");
        return std::nullopt;
    }
    return v->get_ref<const std::string&>();
}

std::optional<bool> json_member_reader::boolean(std::string_view name) {
    const auto* v = member(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) {
        fail(name, "must be true or false");
        return std::nullopt;
    }
    return v->get<bool>();
}

std::optional<std::int64_t> json_member_reader::integer(std::string_view name, std::int64_t min, std::int64_t max) {
    const auto* v = member(name);
    if (!v) return std::nullopt;
    const auto out_of_range = [&] {
        fail(name, "must be an integer in " + std::to_string(min) + ".." + std::to_string(max));
        return std::nullopt;
    };
    if (!v->is_number_integer()) return out_of_range();
    if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max)) return out_of_range();
        if (static_cast<std::int64_t>(u) < min) return out_of_range();
        return static_cast<std::int64_t>(u);
    }
    const auto i = v->get<std::int64_t>();
    if (i < min || i > max) return out_of_range();
    return i;
}

std::optional<double> json_member_reader::number(std::string_view name, double min, double max) {
    const auto* v = member(name);
    if (!v) return std::nullopt;
    const double d = v->is_number() ? v->get<double>() : NAN;
    if (!(d >= min && d <= max)) {
        std::ostringstream why;
        why << "must be a number in [" << min << ", " << max << "]";
        fail(name, why.str());
        return std::nullopt;
    }
    return d;
}

const nlohmann::ordered_json* json_member_reader::object(std::string_view name) {
    const auto* v = member(name);
    if (!v) return nullptr;
    if (!v->is_object()) {
        fail(name, "must be an object");
        return nullptr;
    }
    return v;
}

}  // namespace megatts

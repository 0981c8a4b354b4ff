// result<T>: a value or a named error, returned instead of thrown.
//
// Contract: every fallible function in megatts returns result<T> (or result<void>)
// whose error carries a kind (what the caller can do about it) and a message that
// names the thing that failed (file, tensor, key, ...). Errors never cross threads
// as exceptions. Header-only; usable from host code in every layer. Not used in
// device code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace megatts {

// What kind of failure: the CLI maps invalid_input/not_found/mismatch to exit code 2
// (the user can fix it) and io/internal/unavailable to 1.
enum class error_kind {
    invalid_input,  // bad argument, malformed text or file content
    not_found,      // a file, tensor, voice or key that does not exist
    mismatch,       // two sources that should agree do not (config vs weights)
    unavailable,    // a resource that exists but cannot be used here (no GPU, ...)
    io,             // the operating system refused (read, write, mmap)
    internal,       // a bug: an invariant did not hold
};

const char* error_kind_name(error_kind kind);

struct error {
    error_kind kind = error_kind::internal;
    std::string message;
};

inline error make_error(error_kind kind, std::string message) {
    return error{kind, std::move(message)};
}

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    result(error e) : state_(std::in_place_index<1>, std::move(e)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    // By value from a temporary, so `for (auto& x : *make())` cannot dangle.
    T value() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T operator*() && { return std::move(*this).value(); }

    const error& err() const { return std::get<1>(state_); }

private:
    std::variant<T, error> state_;
};

template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(error e) : error_(std::move(e)), failed_(true) {}

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const error& err() const { return error_; }

private:
    error error_;
    bool failed_ = false;
};

inline const char* error_kind_name(error_kind kind) {
    switch (kind) {
    case error_kind::invalid_input: return "invalid_input";
    case error_kind::not_found: return "not_found";
    case error_kind::mismatch: return "mismatch";
    case error_kind::unavailable: return "unavailable";
    case error_kind::io: return "io";
    case error_kind::internal: return "internal";
    }
    return "internal";
}

}  // namespace megatts

// Propagate an error from an expression returning result<...>; evaluates to nothing.
#define MEGATTS_TRY(expr)                                   \
    do {                                                    \
        auto megatts_try_r_ = (expr);                       \
        if (!megatts_try_r_) return megatts_try_r_.err();   \
    } while (0)

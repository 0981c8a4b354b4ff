// session_result<T>: a value or a session_error, the result type of the session API, so that
// the daemon can map each failure to its protocol answer by code (session_error.h).
// session_status is session_result<void>.
//
// Contract: as kernels/common/result.h, with session_error in place of error. Header-only.
#pragma once

#include <utility>
#include <variant>

#include "pipeline/session/session_error.h"

namespace megatts {

template <class T>
class [[nodiscard]] session_result {
public:
    session_result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    session_result(session_error e) : state_(std::in_place_index<1>, std::move(e)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &value(); }
    T& operator*() & { return value(); }

    const session_error& err() const { return std::get<1>(state_); }

private:
    std::variant<T, session_error> state_;
};

template <>
class [[nodiscard]] session_result<void> {
public:
    session_result() = default;
    session_result(session_error e) : error_(std::move(e)), failed_(true) {}

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const session_error& err() const { return error_; }

private:
    session_error error_;
    bool failed_ = false;
};

using session_status = session_result<void>;

}  // namespace megatts

// cli_exit: how the megatts subcommands turn an error into a message and an exit code.
//
// Contract: a user-fixable error (bad input, something not found, a mismatch between
// files) exits 2; anything else exits 1. Messages go to stderr, prefixed "megatts:" (and
// "<3>" when stderr is the journal, so that it is filed as an error).
#pragma once

#include "kernels/common/result.h"

namespace megatts {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

int report_error(const error& e);

}  // namespace megatts

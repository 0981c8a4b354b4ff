// fuzz_check: the assertion of the fuzz targets. A property that does not hold prints what and
// where (and the detail given, e.g. the error message that broke it), then aborts: libFuzzer
// reports that as a crash and saves the input; the replay test of the normal build reports it
// as a failure of the input being replayed.
//
// Contract: FUZZ_CHECK(condition, what[, detail]) evaluates `condition` once; `what` (a C
// string) says which property failed, `detail` (a string) what the code under test said.
// Any thread; aborts the process on failure, nothing else.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace megatts::fuzz {

[[noreturn]] inline void check_failed(const char* condition, const char* file, int line, const char* what,
                                      std::string_view detail = {}) {
    std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", file, line, condition, what);
    if (!detail.empty()) std::fprintf(stderr, "  detail: %s\n", std::string(detail).c_str());
    std::abort();
}

}  // namespace megatts::fuzz

#define FUZZ_CHECK(condition, ...)                                                              \
    do {                                                                                        \
        if (!(condition)) ::megatts::fuzz::check_failed(#condition, __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#include "daemon/cli_exit.h"

#include <cstdio>

namespace megatts {

int report_error(const error& e) {
    std::fprintf(stderr, "megatts: %s\n", e.message.c_str());
    switch (e.kind) {
    case error_kind::invalid_input:
    case error_kind::not_found:
    case error_kind::mismatch:
        return exit_usage;
    default:
        return exit_failure;
    }
}

}  // namespace megatts

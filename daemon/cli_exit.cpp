#include "daemon/cli_exit.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "daemon/systemd/journal_logging.h"

namespace megatts {

int report_error(const error& e) {
    // Under systemd, "<3>" files the line in the journal as an error.
    const char* priority = stream_is_journal(STDERR_FILENO, std::getenv("JOURNAL_STREAM")) ? "<3>" : "";
    std::fprintf(stderr, "%smegatts: %s\n", priority, e.message.c_str());
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

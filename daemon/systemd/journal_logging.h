// journal_logging: where the daemon's log lines go. Under systemd (JOURNAL_STREAM names this
// process's stderr) each line is "<N>message", N the syslog priority of its level, which
// journald stores as the entry's PRIORITY (so `journalctl -p warning -u megatts` works), with no
// time stamp (the journal keeps its own). Otherwise lines go to stderr with the time and level.
//
// Contract: configure_logging() replaces spdlog's default logger and sets its level; call it
// once at start, on the main thread, before other threads log. syslog_priority(): trace and
// debug 7, info 6, warn 4, error 3, critical 2, off 7. stream_is_journal(fd, value) is true when
// `value` ("DEVICE:INODE", as systemd writes JOURNAL_STREAM) names fd's open file; a malformed
// or absent value is false. journal_formatter() is the "<N>message" formatter (for tests).
// Lines at info and above carry ids and codes, never user text or secrets; lines about one
// session name it "session N".
#pragma once

#include <memory>

#include <spdlog/common.h>
#include <spdlog/formatter.h>

namespace megatts {

int syslog_priority(spdlog::level::level_enum level);
bool stream_is_journal(int fd, const char* journal_stream);
std::unique_ptr<spdlog::formatter> journal_formatter();
void configure_logging(spdlog::level::level_enum level);

}  // namespace megatts

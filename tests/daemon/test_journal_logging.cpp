// journal_logging: "<N>" syslog priorities on every line when stderr is the journal, and the
// recognition of JOURNAL_STREAM ("DEVICE:INODE" of the journal's stream).
#include "daemon/systemd/journal_logging.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <string>

#include <spdlog/details/log_msg.h>

namespace megatts {
namespace {

std::string formatted(spdlog::level::level_enum level, const char* text) {
    const spdlog::details::log_msg msg("megatts", level, text);
    spdlog::memory_buf_t out;
    journal_formatter()->format(msg, out);
    return std::string(out.data(), out.size());
}

TEST_CASE("levels map to syslog priorities", "[journal]") {
    CHECK(syslog_priority(spdlog::level::trace) == 7);
    CHECK(syslog_priority(spdlog::level::debug) == 7);
    CHECK(syslog_priority(spdlog::level::info) == 6);
    CHECK(syslog_priority(spdlog::level::warn) == 4);
    CHECK(syslog_priority(spdlog::level::err) == 3);
    CHECK(syslog_priority(spdlog::level::critical) == 2);
}

TEST_CASE("a journal line is the priority and the message, nothing else", "[journal]") {
    CHECK(formatted(spdlog::level::warn, "session 7 closing: slow_consumer") ==
          "<4>session 7 closing: slow_consumer\n");
    CHECK(formatted(spdlog::level::info, "ready").starts_with("<6>ready"));
    CHECK(formatted(spdlog::level::err, "x").starts_with("<3>x"));
}

TEST_CASE("JOURNAL_STREAM is recognised only when it names the stream's own file", "[journal]") {
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    const int fd = fileno(file);
    struct stat st {};
    REQUIRE(fstat(fd, &st) == 0);
    const auto same = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    const auto other_inode = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1);
    CHECK(stream_is_journal(fd, same.c_str()));
    CHECK_FALSE(stream_is_journal(fd, other_inode.c_str()));
    CHECK_FALSE(stream_is_journal(fd, nullptr));
    for (const char* malformed : {"", ":", "12", "12:", ":34", "a:b", "1:2:3", " 1:2", "-1:2"})
        CHECK_FALSE(stream_is_journal(fd, malformed));
    CHECK_FALSE(stream_is_journal(-1, same.c_str()));
    std::fclose(file);
}

}  // namespace
}  // namespace megatts

#include "daemon/systemd/journal_logging.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace megatts {
namespace {

// "%*": the line's "<N>" prefix, which journald's stream protocol reads as its priority.
class syslog_prefix_flag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const std::string prefix = "<" + std::to_string(syslog_priority(msg.level)) + ">";
        dest.append(prefix.data(), prefix.data() + prefix.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<syslog_prefix_flag>(); }
};

bool parse_unsigned(std::string_view text, unsigned long long& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

int syslog_priority(spdlog::level::level_enum level) {
    switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;
    }
}

bool stream_is_journal(int fd, const char* journal_stream) {
    if (!journal_stream) return false;
    const std::string_view value(journal_stream);
    const auto colon = value.find(':');
    unsigned long long device = 0, inode = 0;
    if (colon == std::string_view::npos || !parse_unsigned(value.substr(0, colon), device) ||
        !parse_unsigned(value.substr(colon + 1), inode))
        return false;
    struct stat st {};
    if (fstat(fd, &st) != 0) return false;
    return static_cast<unsigned long long>(st.st_dev) == device && static_cast<unsigned long long>(st.st_ino) == inode;
}

std::unique_ptr<spdlog::formatter> journal_formatter() {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<syslog_prefix_flag>('*').set_pattern("%*%v");
    return formatter;
}

void configure_logging(spdlog::level::level_enum level) {
    std::shared_ptr<spdlog::logger> logger;
    if (stream_is_journal(STDERR_FILENO, std::getenv("JOURNAL_STREAM"))) {
        logger = std::make_shared<spdlog::logger>("megatts", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        logger->set_formatter(journal_formatter());
    } else {
        logger = std::make_shared<spdlog::logger>("megatts", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
    }
    logger->set_level(level);
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace megatts

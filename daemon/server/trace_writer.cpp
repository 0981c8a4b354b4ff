#include "daemon/server/trace_writer.h"

#include <fstream>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

namespace megatts {

std::string trace_file_name(std::uint64_t session, std::uint32_t context) {
    return "megatts-s" + std::to_string(session) + "-u" + std::to_string(context) + ".json";
}

trace_writer::trace_writer(std::filesystem::path dir, trace_writer_limits limits)
    : dir_(std::move(dir)), limits_(limits), worker_([this] { run(); }) {}

trace_writer::~trace_writer() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_one();
    worker_.join();
}

bool trace_writer::post(std::string file_name, std::string text) {
    {
        std::lock_guard lock(mutex_);
        if (stopped_ || queue_.size() >= limits_.queue) {
            ++counts_.dropped;
            return false;
        }
        queue_.push_back({std::move(file_name), std::move(text)});
    }
    ready_.notify_one();
    return true;
}

trace_writer::counts trace_writer::totals() const {
    std::lock_guard lock(mutex_);
    return counts_;
}

void trace_writer::run() {
    for (;;) {
        pending next;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and everything queued is written
            next = std::move(queue_.front());
            queue_.pop_front();
        }
        const bool go_on = write(next);
        std::lock_guard lock(mutex_);
        if (!go_on) {
            stopped_ = true;
            counts_.dropped += static_cast<int>(queue_.size());
            queue_.clear();
            continue;
        }
        if (++counts_.written >= limits_.max_files) {
            spdlog::warn("trace: wrote {} files into {} (server.trace_max_files); no more are written",
                         counts_.written, dir_.string());
            stopped_ = true;
            counts_.dropped += static_cast<int>(queue_.size());
            queue_.clear();
        }
    }
}

bool trace_writer::write(const pending& p) {
    const auto target = dir_ / p.name;
    auto temporary = target;
    temporary += ".part";
    std::error_code ec;
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << p.text;
        out.close();
        if (!out) ec = std::make_error_code(std::errc::io_error);
    }
    if (!ec) std::filesystem::rename(temporary, target, ec);
    if (!ec) return true;
    spdlog::warn("trace: cannot write {} ({}); no more trace files are written", target.string(), ec.message());
    std::filesystem::remove(temporary, ec);
    return false;
}

}  // namespace megatts

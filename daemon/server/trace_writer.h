// trace_writer: writes the per-utterance Chrome-trace files of `serve --trace DIR`
// (server.trace_dir) off the event loop: connections post a file's name and text, a worker
// thread writes it.
//
// Bounds and policy: at most `queue` files wait; a post into a full queue drops that trace
// (counted, never waited for). At most `max_files` files are written in one run; past them, or
// at the first write that fails (directory gone, disk full, no permission), one warning goes to
// the log and nothing more is written. A file is written under a temporary name and renamed,
// so a reader never sees half of one.
//
// Thread: post() from any thread, O(1) under one mutex, never blocks on disk. The destructor
// writes what is queued (bounded by `queue`) and joins the worker. File names must be plain
// names (no '/'): trace_file_name() makes an utterance's.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

namespace megatts {

struct trace_writer_limits {
    std::size_t queue = 64;
    int max_files = 1000;
};

// One file per utterance: the session's id and the utterance's index in it (its context).
std::string trace_file_name(std::uint64_t session, std::uint32_t context);

class trace_writer {
public:
    trace_writer(std::filesystem::path dir, trace_writer_limits limits);
    ~trace_writer();
    trace_writer(const trace_writer&) = delete;
    trace_writer& operator=(const trace_writer&) = delete;

    // False when the trace was dropped: queue full, or writing has stopped.
    bool post(std::string file_name, std::string text);

    struct counts {
        int written = 0;
        int dropped = 0;
    };
    counts totals() const;

private:
    struct pending {
        std::string name, text;
    };

    void run();
    // Writes one file; false (after the warning) when writing must stop.
    bool write(const pending& p);

    const std::filesystem::path dir_;
    const trace_writer_limits limits_;
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<pending> queue_;
    counts counts_;
    bool stopped_ = false;   // no more files: the limit, or a failed write
    bool stopping_ = false;  // the destructor runs
    std::thread worker_;     // last: starts once everything above exists
};

}  // namespace megatts

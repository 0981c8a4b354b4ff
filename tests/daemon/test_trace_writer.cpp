// The trace writer: files appear whole under their names; the file limit and an unwritable
// directory each stop it with nothing more written; a full queue drops instead of waiting.
#include "daemon/server/trace_writer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tests/support/eventually.h"

namespace megatts {
namespace {

namespace fs = std::filesystem;

struct temp_dir {
    temp_dir() {
        path = fs::temp_directory_path() / ("megatts-trace-test-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(counter++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() { fs::remove_all(path); }
    static inline int counter = 0;
    fs::path path;
};

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// prefix<i>.json (appended piecewise: GCC 12 warns falsely on "literal" + std::string).
std::string numbered(const char* prefix, int i) {
    std::string name(prefix);
    name += std::to_string(i);
    name += ".json";
    return name;
}

int files_in(const fs::path& dir) {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
    return n;
}

TEST_CASE("trace_writer: each posted file is written under its name, whole", "[trace]") {
    temp_dir dir;
    {
        trace_writer w(dir.path, {.queue = 8, .max_files = 10});
        CHECK(w.post("a.json", "{\"a\":1}"));
        CHECK(w.post("b.json", "{\"b\":2}"));
    }  // the destructor writes what is queued
    CHECK(read(dir.path / "a.json") == "{\"a\":1}");
    CHECK(read(dir.path / "b.json") == "{\"b\":2}");
    CHECK(files_in(dir.path) == 2);  // no temporary left behind
}

TEST_CASE("trace_writer: past max_files nothing more is written", "[trace]") {
    temp_dir dir;
    {
        trace_writer w(dir.path, {.queue = 64, .max_files = 3});
        for (int i = 0; i < 10; ++i) (void)w.post(numbered("t", i), "{}");
    }
    CHECK(files_in(dir.path) == 3);
}

TEST_CASE("trace_writer: a directory it cannot write stops it after one try", "[trace]") {
    temp_dir dir;
    const auto gone = dir.path / "missing";
    trace_writer w(gone, {.queue = 4, .max_files = 10});
    (void)w.post("x.json", "{}");
    // Once the failed write stopped it, a post is refused; the worker gets there eventually.
    using namespace std::chrono_literals;
    CHECK(test::eventually([&] { return !w.post("y.json", "{}"); }, 10s, 5ms));
    CHECK(w.totals().written == 0);
    CHECK_FALSE(fs::exists(gone));
}

TEST_CASE("trace_writer: what a full queue refuses is dropped, everything it took is written", "[trace]") {
    temp_dir dir;
    constexpr int k_posts = 500;
    int refused = 0;
    {
        trace_writer w(dir.path, {.queue = 1, .max_files = 100000});
        for (int i = 0; i < k_posts; ++i) refused += w.post(numbered("q", i), "{}") ? 0 : 1;
        CHECK(w.totals().dropped == refused);
    }  // the destructor writes what is queued
    CHECK(files_in(dir.path) + refused == k_posts);
}

}  // namespace
}  // namespace megatts

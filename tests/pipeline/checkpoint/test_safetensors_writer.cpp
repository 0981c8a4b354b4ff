// The safetensors writer: what it writes, the reader reads back exactly (names,
// shapes, dtypes, values, metadata) in the Hugging Face byte layout; a file is either
// complete at its path or absent.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pipeline/model/safetensors.h"
#include "pipeline/model/safetensors_writer.h"

using namespace megatts;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test case and process, removed afterwards.
struct temp_dir {
    fs::path path;
    explicit temp_dir(const std::string& tag)
        : path(fs::temp_directory_path() / ("megatts-writer-" + tag + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() { fs::remove_all(path); }
};

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
    return std::as_bytes(std::span(v));
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("written tensors read back with names, shapes, dtypes, values and metadata") {
    temp_dir dir("roundtrip");
    const auto path = (dir.path / "t.safetensors").string();
    const std::vector<float> b_values{0.1f, -2.5f, 3.14159f, 1e-3f, 65504.f, -0.f};
    std::vector<std::uint16_t> b_bits;
    for (float x : b_values) b_bits.push_back(f32_to_bf16(x));
    const std::vector<float> a_values{1.5f, -2.f, 0.25f};
    const std::vector<std::int32_t> c_values{7};

    // Deliberately not in name order: the writer keeps the caller's order.
    std::vector<tensor_spec> specs{{"b.weight", {2, 3}, dtype::bf16}, {"a", {3}, dtype::f32}, {"c", {1, 1}, dtype::i32}};
    auto w = safetensors_writer::create(path, specs, {{"producer", "test"}});
    REQUIRE(w.ok());
    CHECK_FALSE(fs::exists(path));  // only the .partial file exists until finish()
    // Data arrives in pieces that straddle tensor boundaries.
    auto b_bytes = bytes_of(b_bits);
    REQUIRE(w->append(b_bytes.first(5)).ok());
    REQUIRE(w->append(b_bytes.subspan(5)).ok());
    REQUIRE(w->append(bytes_of(a_values)).ok());
    REQUIRE(w->append(bytes_of(c_values)).ok());
    REQUIRE(w->finish().ok());
    CHECK_FALSE(fs::exists(path + ".partial"));

    auto f = safetensors_file::open(path);
    INFO((f ? "" : f.err().message));
    REQUIRE(f.ok());
    CHECK(f->metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"producer", "test"}});
    REQUIRE(f->tensors().size() == 3);

    const auto* b = f->find("b.weight");
    REQUIRE(b != nullptr);
    CHECK(b->type == dtype::bf16);
    CHECK(b->shape == std::vector<std::int64_t>{2, 3});
    auto b_read = to_f32(*b);
    REQUIRE(b_read.ok());
    for (std::size_t i = 0; i < b_values.size(); ++i) CHECK((*b_read)[i] == bf16_to_f32(f32_to_bf16(b_values[i])));
    CHECK((*b_read)[0] != b_values[0]);  // 0.1 is not a bf16 value: rounding happened
    CHECK((*b_read)[3] == Approx(1e-3).epsilon(1.0 / 256));

    const auto* a = f->find("a");
    REQUIRE(a != nullptr);
    CHECK(a->type == dtype::f32);
    CHECK(*to_f32(*a) == a_values);
    const auto* c = f->find("c");
    REQUIRE(c != nullptr);
    CHECK(c->type == dtype::i32);
    std::int32_t c0 = 0;
    std::memcpy(&c0, c->bytes.data(), 4);
    CHECK(c0 == 7);

    // The Hugging Face layout: u64 header length, compact JSON with __metadata__
    // first, space padding to a multiple of 8, data in the given order.
    const auto raw = file_bytes(path);
    std::uint64_t header_len = 0;
    std::memcpy(&header_len, raw.data(), 8);
    CHECK(header_len % 8 == 0);
    const auto header = raw.substr(8, header_len);
    CHECK(header.starts_with(R"({"__metadata__":{"format":"pt","producer":"test"},"b.weight":{"dtype":"BF16",)"
                             R"("shape":[2,3],"data_offsets":[0,12]},"a":)"));
    const auto json_end = header.find_last_of('}');
    CHECK(header.find_first_not_of(' ', json_end + 1) == std::string::npos);
    CHECK(header.size() - json_end - 1 < 8);
    CHECK(raw.size() == 8 + header_len + 12 + 12 + 4);
}

TEST_CASE("a file with no tensors is valid") {
    temp_dir dir("empty");
    const auto path = (dir.path / "e.safetensors").string();
    auto w = safetensors_writer::create(path, {});
    REQUIRE(w.ok());
    REQUIRE(w->finish().ok());
    auto f = safetensors_file::open(path);
    REQUIRE(f.ok());
    CHECK(f->tensors().empty());
}

TEST_CASE("a writer that gets too few or too many bytes leaves no file behind") {
    temp_dir dir("sizes");
    const auto path = (dir.path / "w.safetensors").string();
    const std::vector<tensor_spec> specs{{"w", {4}, dtype::f32}};
    const std::vector<float> three{1, 2, 3}, five{1, 2, 3, 4, 5};

    SECTION("too few") {
        auto w = safetensors_writer::create(path, specs);
        REQUIRE(w.ok());
        REQUIRE(w->append(bytes_of(three)).ok());
        auto r = w->finish();
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.err().message, Catch::Contains(path) && Catch::Contains("12 of the 16"));
    }
    SECTION("too many") {
        auto w = safetensors_writer::create(path, specs);
        REQUIRE(w.ok());
        auto r = w->append(bytes_of(five));
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.err().message, Catch::Contains(path) && Catch::Contains("more data"));
        CHECK_FALSE(w->finish().ok());  // the writer stays closed
    }
    SECTION("destroyed unfinished") {
        auto w = safetensors_writer::create(path, specs);
        REQUIRE(w.ok());
        REQUIRE(w->append(bytes_of(three)).ok());
    }
    CHECK(fs::is_empty(dir.path));
}

TEST_CASE("an unfinished rewrite leaves the previous file untouched") {
    temp_dir dir("keep");
    const auto path = (dir.path / "k.safetensors").string();
    const std::vector<float> one{42.f};
    {
        auto w = safetensors_writer::create(path, {{"x", {1}, dtype::f32}});
        REQUIRE(w.ok());
        REQUIRE(w->append(bytes_of(one)).ok());
        REQUIRE(w->finish().ok());
    }
    const auto before = file_bytes(path);
    {
        auto w = safetensors_writer::create(path, {{"y", {8}, dtype::f32}});
        REQUIRE(w.ok());
        REQUIRE(w->append(bytes_of(one)).ok());
    }
    CHECK(file_bytes(path) == before);
}

TEST_CASE("bad arguments and unwritable paths are errors that name the path") {
    temp_dir dir("errors");
    const auto path = (dir.path / "x.safetensors").string();
    auto duplicate = safetensors_writer::create(path, {{"w", {1}, dtype::f32}, {"w", {2}, dtype::f32}});
    REQUIRE_FALSE(duplicate.ok());
    CHECK_THAT(duplicate.err().message, Catch::Contains(path) && Catch::Contains("'w'"));

    auto reserved = safetensors_writer::create(path, {}, {{"format", "np"}});
    REQUIRE_FALSE(reserved.ok());
    CHECK_THAT(reserved.err().message, Catch::Contains("format"));

    const auto missing_dir = (dir.path / "no-such-dir" / "x.safetensors").string();
    auto unwritable = safetensors_writer::create(missing_dir, {});
    REQUIRE_FALSE(unwritable.ok());
    CHECK(unwritable.err().kind == error_kind::not_found);
    CHECK_THAT(unwritable.err().message, Catch::Contains(missing_dir));
}

TEST_CASE("a full disk is an io error naming the path") {
    // /dev/full accepts the open and fails every write with ENOSPC; the writer opens
    // `path + ".partial"`, so point that at it through a symlink.
    if (!fs::exists("/dev/full")) return;
    temp_dir dir("full");
    const auto path = (dir.path / "f.safetensors").string();
    fs::create_symlink("/dev/full", path + ".partial");
    auto w = safetensors_writer::create(path, {{"w", {1}, dtype::f32}});
    REQUIRE_FALSE(w.ok());
    CHECK(w.err().kind == error_kind::io);
    CHECK_THAT(w.err().message, Catch::Contains(path) && Catch::Contains("No space left on device"));
}

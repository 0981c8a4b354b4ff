// The safetensors reader: valid files parse; every kind of broken header is a named error.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pipeline/model/safetensors.h"

using namespace megatts;

namespace {

// A safetensors image from a header string and a data section of `data_bytes` bytes.
std::vector<std::byte> image(const std::string& header, std::size_t data_bytes) {
    std::vector<std::byte> out(8 + header.size() + data_bytes, std::byte{0});
    std::uint64_t n = header.size();
    std::memcpy(out.data(), &n, 8);
    std::memcpy(out.data() + 8, header.data(), header.size());
    return out;
}

std::string parse_error(const std::vector<std::byte>& img) {
    auto r = safetensors_file::parse(img, "t.safetensors");
    REQUIRE_FALSE(r.ok());
    return r.err().message;
}

}  // namespace

TEST_CASE("a well-formed file parses with names, shapes, dtypes and metadata") {
    auto img = image(R"({"__metadata__":{"format":"pt"},)"
                     R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
                     R"("a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", 12);
    float two[2] = {1.5f, -2.0f};
    std::memcpy(img.data() + img.size() - 8, two, 8);
    std::uint16_t bf[2] = {f32_to_bf16(0.25f), f32_to_bf16(3.0f)};
    std::memcpy(img.data() + img.size() - 12, bf, 4);

    auto f = safetensors_file::parse(img, "t.safetensors");
    REQUIRE(f.ok());
    REQUIRE(f->tensors().size() == 2);
    CHECK(f->tensors()[0].name == "a");  // sorted by name
    CHECK(f->metadata().at("format") == "pt");
    auto a = to_f32(*f->find("a"));
    REQUIRE(a.ok());
    CHECK((*a)[0] == 0.25f);
    CHECK((*a)[1] == 3.0f);
    auto b = to_f32(*f->find("b"));
    CHECK((*b)[1] == -2.0f);
    CHECK(f->find("c") == nullptr);
}

TEST_CASE("broken headers are named errors") {
    CHECK_THAT(parse_error(image("", 0)), Catch::Contains("not a JSON object"));
    CHECK_THAT(parse_error(image("{not json", 0)), Catch::Contains("not a JSON object"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4)),
               Catch::Contains("unsupported dtype 'F99'"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4)),
               Catch::Contains("does not match shape"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)),
               Catch::Contains("non-negative"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F32","shape":[1]}})", 4)), Catch::Contains("data_offsets"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                 R"("v":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})", 6)),
               Catch::Contains("overlap"));
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}})", 4)),
               Catch::Contains("overflows"));
    // Empty, but numel() would overflow on the way to the zero (found by fuzz/safetensors).
    CHECK_THAT(parse_error(image(R"({"w":{"dtype":"U8","shape":[4611686018427387904,2,0],"data_offsets":[0,0]}})", 0)),
               Catch::Contains("overflows"));
}

TEST_CASE("an empty tensor parses and converts to an empty vector") {
    auto f = safetensors_file::parse(image(R"({"e":{"dtype":"F32","shape":[3,0],"data_offsets":[0,0]}})", 0), "t");
    REQUIRE(f.ok());
    const auto* e = f->find("e");
    REQUIRE(e != nullptr);
    CHECK(e->numel() == 0);
    auto values = to_f32(*e);
    REQUIRE(values.ok());
    CHECK(values->empty());
}

TEST_CASE("a truncated file says so and names the tensor") {
    auto img = image(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 16);
    img.resize(img.size() - 5);
    auto msg = parse_error(img);
    CHECK_THAT(msg, Catch::Contains("'w'"));
    CHECK_THAT(msg, Catch::Contains("truncated"));

    std::vector<std::byte> short_header(8, std::byte{0});
    std::uint64_t huge = 1000;
    std::memcpy(short_header.data(), &huge, 8);
    CHECK_THAT(parse_error(short_header), Catch::Contains("exceeds the file size"));
    CHECK_THAT(parse_error(std::vector<std::byte>(3)), Catch::Contains("too short"));
}

TEST_CASE("a missing file is not_found and names the path") {
    auto r = safetensors_file::open("/nonexistent/model.safetensors");
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().kind == error_kind::not_found);
    CHECK_THAT(r.err().message, Catch::Contains("/nonexistent/model.safetensors"));
}

TEST_CASE("integer tensors do not convert to float") {
    auto img = image(R"({"i":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", 4);
    auto f = safetensors_file::parse(img, "t");
    REQUIRE(f.ok());
    auto r = to_f32(*f->find("i"));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("I32"));
}

TEST_CASE("bf16 rounding is to nearest even") {
    CHECK(f32_to_bf16(1.0f) == 0x3f80);
    CHECK(bf16_to_f32(f32_to_bf16(1.00390625f)) == 1.0f);       // exactly half an ulp: even stays
    CHECK(bf16_to_f32(f32_to_bf16(1.01171875f)) == 1.015625f);  // half an ulp above odd: rounds up
}

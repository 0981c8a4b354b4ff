#include "pipeline/text/byte_level_bpe.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/pipeline/text/tiny_tokenizer_dir.h"

namespace megatts {
namespace {

using ids = std::vector<std::int32_t>;

// Single-byte tokens have the byte as id; extra tokens follow from 256 in the order given.
constexpr std::int32_t a = 'a';
constexpr std::int32_t b = 'b';
constexpr std::int32_t c = 'c';

byte_level_bpe load(const test::tiny_tokenizer_dir& dir) {
    auto bpe = byte_level_bpe::load(dir.path() / "vocab.json", dir.path() / "merges.txt");
    INFO((bpe ? "" : bpe.err().message));
    REQUIRE(bpe.ok());
    return std::move(*bpe);
}

ids encode(const byte_level_bpe& bpe, std::string_view piece) {
    ids out;
    bpe.encode(piece, out);
    return out;
}

TEST_CASE("byte_level_bpe merges the pair of lowest rank first", "[tokenizer]") {
    // "bc" (256) outranks "ab" (257): "abc" becomes a + bc, not ab + c.
    const test::tiny_tokenizer_dir dir({"bc", "ab"}, {{"b", "c"}, {"a", "b"}}, {});
    const byte_level_bpe bpe = load(dir);
    CHECK(encode(bpe, "abc") == ids{a, 256});
    CHECK(encode(bpe, "ab") == ids{257});
    CHECK(encode(bpe, "cab") == ids{c, 257});
}

TEST_CASE("byte_level_bpe merges the leftmost of equal pairs first", "[tokenizer]") {
    const test::tiny_tokenizer_dir dir({"aa", "aaaa"}, {{"a", "a"}, {"aa", "aa"}}, {});
    const byte_level_bpe bpe = load(dir);
    CHECK(encode(bpe, "aaa") == ids{256, a});
    CHECK(encode(bpe, "aaaa") == ids{257});
    CHECK(encode(bpe, "aaaaa") == ids{257, a});
}

TEST_CASE("byte_level_bpe applies merges that earlier merges make possible", "[tokenizer]") {
    // "ab" + "c" ranks after "a" + "b" and can only apply once that merge has happened; a later
    // "ab" merge to the right must not be lost either.
    const test::tiny_tokenizer_dir dir({"ab", "abc"}, {{"a", "b"}, {"ab", "c"}}, {});
    const byte_level_bpe bpe = load(dir);
    CHECK(encode(bpe, "abcab") == ids{257, 256});
    CHECK(encode(bpe, "cabc") == ids{c, 257});
}

TEST_CASE("byte_level_bpe keeps the last rank of a repeated merge", "[tokenizer]") {
    // As in both Hugging Face implementations, a pair listed twice takes its later rank, so here
    // "b" + "c" (rank 1) beats "a" + "b" (rank 2).
    const test::tiny_tokenizer_dir dir({"ab", "bc"}, {{"a", "b"}, {"b", "c"}, {"a", "b"}}, {});
    const byte_level_bpe bpe = load(dir);
    CHECK(encode(bpe, "abc") == ids{a, 257});
}

TEST_CASE("byte_level_bpe encodes every byte, and maps ids back to raw bytes", "[tokenizer]") {
    const test::tiny_tokenizer_dir dir({" \xFF"}, {{" ", "\xFF"}}, {});
    const byte_level_bpe bpe = load(dir);
    CHECK(bpe.size() == 257);
    CHECK(encode(bpe, std::string("\0\x01 \xFF\x80", 5)) == ids{0, 1, 256, 0x80});
    CHECK(bpe.token_bytes(256).value() == " \xFF");
    CHECK(bpe.token_bytes(0).value() == std::string(1, '\0'));
    CHECK_FALSE(bpe.token_bytes(257).has_value());
    CHECK_FALSE(bpe.token_bytes(-1).has_value());
}

TEST_CASE("byte_level_bpe stays fast on a long piece", "[tokenizer]") {
    // A quadratic merge loop would take seconds here; the heap takes milliseconds. Checked for
    // its result only (timing belongs to benchmarks).
    const test::tiny_tokenizer_dir dir({"aa", "aaaa"}, {{"a", "a"}, {"aa", "aa"}}, {});
    const byte_level_bpe bpe = load(dir);
    const ids encoded = encode(bpe, std::string(200001, 'a'));
    REQUIRE(encoded.size() == 50001);
    CHECK(encoded.front() == 257);
    CHECK(encoded.back() == a);
}

}  // namespace
}  // namespace megatts

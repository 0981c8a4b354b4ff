#include "pipeline/text/nfc.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

namespace megatts {
namespace {

std::string nfc(std::string_view text) {
    std::string out;
    REQUIRE(append_nfc(text, out).ok());
    return out;
}

std::string utf8(char32_t c) {
    utf8proc_uint8_t bytes[4];
    const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), bytes);
    return std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(n));
}

TEST_CASE("append_nfc composes, reorders and appends", "[nfc]") {
    CHECK(nfc("plain ASCII") == "plain ASCII");
    CHECK(nfc("cafe\xCC\x81") == "caf\xC3\xA9");                         // e + U+0301
    CHECK(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8") == "\xEA\xB0\x81");  // jamo -> 각
    CHECK(nfc("s\xCC\x87\xCC\xA3") == "\xE1\xB9\xA9");                  // s + dot above + below
    CHECK(nfc("\xE2\x84\xA6") == "\xCE\xA9");                            // Ohm sign -> Omega
    CHECK(nfc("\xEF\xBC\xA1") == "\xEF\xBC\xA1");                        // fullwidth A stays
    // U+11A7 is no trailing consonant: it stays after an LV syllable, decomposed or not (utf8proc
    // 2.8 alone drops it), and the text around it is normalized as ever.
    CHECK(nfc("\xEA\xB0\x80\xE1\x86\xA7 ") == "\xEA\xB0\x80\xE1\x86\xA7 ");
    CHECK(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA7" "e\xCC\x81") == "\xEA\xB0\x80\xE1\x86\xA7\xC3\xA9");
    CHECK(nfc("\xE1\x86\xA7\xE1\x86\xA7") == "\xE1\x86\xA7\xE1\x86\xA7");
    std::string out = "x";
    REQUIRE(append_nfc("e\xCC\x81", out).ok());
    CHECK(out == "x\xC3\xA9");
}

TEST_CASE("append_nfc rejects text that is not UTF-8", "[nfc]") {
    std::string out;
    auto normalized = append_nfc("caf\xC3", out);
    REQUIRE_FALSE(normalized.ok());
    CHECK(normalized.err().kind == error_kind::invalid_input);
    std::string kept(1, 'x');
    normalized = append_nfc("\xC3\xA9\xE1\x86\xA7" "caf\xC3", kept);  // the error after a U+11A7
    REQUIRE_FALSE(normalized.ok());
    CHECK(normalized.err().kind == error_kind::invalid_input);
    CHECK(kept == "x");
}

TEST_CASE("nfc_boundary_before and nfc_stable_start on known characters", "[nfc]") {
    CHECK(nfc_boundary_before(U'a'));
    CHECK(nfc_boundary_before(U' '));
    CHECK(nfc_boundary_before(U'\u4F60'));
    CHECK(nfc_boundary_before(U'\u00E9'));   // é: starts with e
    CHECK(nfc_boundary_before(U'\uAC00'));   // LV syllable: starts with a leading jamo
    CHECK_FALSE(nfc_boundary_before(U'\u0301'));  // combining mark
    CHECK_FALSE(nfc_boundary_before(U'\u1161'));  // Hangul vowel jamo joins a leading one
    CHECK_FALSE(nfc_boundary_before(U'\u11A8'));  // Hangul final jamo joins an LV syllable
    CHECK_FALSE(nfc_boundary_before(U'\u0BBE'));  // a starter that composes backward
    CHECK_FALSE(nfc_boundary_before(U'\u0F73'));  // decomposes to two non-starters

    CHECK(nfc_stable_start(U' '));
    CHECK(nfc_stable_start(U','));
    CHECK(nfc_stable_start(U'1'));
    CHECK(nfc_stable_start(U'\u4F60'));
    CHECK(nfc_stable_start(U'\uFF0C'));
    CHECK_FALSE(nfc_stable_start(U'e'));       // e + U+0301 = é
    CHECK_FALSE(nfc_stable_start(U'<'));       // < + U+0338 = U+226E
    CHECK_FALSE(nfc_stable_start(U'\u00E9'));  // decomposes; é + U+0323 reorders
    CHECK_FALSE(nfc_stable_start(U'\u1100'));  // leading jamo takes a vowel
    CHECK_FALSE(nfc_stable_start(U'\uAC00'));  // LV syllable takes a final jamo
    CHECK_FALSE(nfc_stable_start(U'\u2126'));  // Ohm sign: NFC turns it into Omega
    CHECK_FALSE(nfc_stable_start(U'\u0301'));
}

TEST_CASE("the NFC boundary predicates hold on random text", "[nfc]") {
    // Characters of every kind that the predicates distinguish, mixed at random; the claims
    // are checked against utf8proc's own normalization of the whole text.
    const std::vector<char32_t> alphabet = {
        U'a', U'e', U's', U'<', U'=', U' ', U',', U'1', U'\u00E9', U'\u1E63', U'\u0301',
        U'\u0307', U'\u0323', U'\u0338', U'\u0345', U'\u1100', U'\u1161', U'\u11A8', U'\uAC00',
        U'\u0BC6', U'\u0BBE', U'\u0BD7', U'\u0B47', U'\u0B3E', U'\u0F73', U'\u0344', U'\u2126',
        U'\u212B', U'\u4F60', U'\u1F00', U'\u03B1', U'\u0313', U'\u0300', U'\U0001109A',
        U'\U00011099', U'\U000110BA'};
    std::mt19937 rng(99);
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::uniform_int_distribution<int> length(1, 12);
    int boundaries = 0;
    int non_boundaries = 0;
    int stable = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<char32_t> text(static_cast<std::size_t>(length(rng)));
        for (char32_t& c : text) c = alphabet[pick(rng)];
        std::string whole;
        for (const char32_t c : text) whole += utf8(c);
        const std::string whole_nfc = nfc(whole);
        std::string before;
        for (std::size_t i = 0; i < text.size(); ++i) {
            std::string after;
            for (std::size_t j = i; j < text.size(); ++j) after += utf8(text[j]);
            INFO("text: " << whole << ", cut before character " << i);
            if (nfc_boundary_before(text[i])) {
                ++boundaries;
                CHECK(nfc(before) + nfc(after) == whole_nfc);
            } else {
                ++non_boundaries;
            }
            if (nfc_stable_start(text[i])) {
                ++stable;
                CHECK(nfc(after).starts_with(utf8(text[i])));
            }
            before += utf8(text[i]);
        }
    }
    CHECK(boundaries > 1000);
    CHECK(non_boundaries > 1000);
    CHECK(stable > 1000);
}

}  // namespace
}  // namespace megatts

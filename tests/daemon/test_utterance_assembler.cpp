// unit: the client's protocol checks (daemon/client/utterance_assembler.h) on hand-made message
// streams: a correct utterance becomes a record; each broken promise is named.
#include <catch2/catch.hpp>

#include "daemon/client/utterance_assembler.h"

namespace megatts::client {
namespace {

received started(std::uint32_t context) {
    return server_event{started_event{.context = context, .format = audio_format::pcm16, .sample_rate = 24000}};
}

received audio(std::uint32_t context, std::uint32_t sequence, std::uint32_t timestamp, std::size_t samples,
               std::uint16_t flags = 0) {
    return received_audio{.header = {.kind = audio_kind::pcm16, .flags = flags, .context = context,
                                     .sequence = sequence, .timestamp = timestamp},
                          .payload = std::vector<std::uint8_t>(samples * 2, 0)};
}

received metrics(std::uint32_t context) {
    return server_event{metrics_event{.context = context, .marks = {{"received", 0.0}}, .server_ttfa_ms = 1.0}};
}

received done(std::uint32_t context, std::int64_t messages) {
    return server_event{done_event{.context = context, .reason = done_reason::end, .messages = messages}};
}

// A correct utterance of two 100-sample blocks: started, audio, metrics, audio, last, done.
std::vector<received> utterance(std::uint32_t context) {
    return {started(context), audio(context, 0, 0, 100, audio_flag::first), metrics(context),
            audio(context, 1, 100, 100), audio(context, 2, 200, 0, audio_flag::last), done(context, 3)};
}

// Feeds the messages; the record if the last one finished it, or the first error.
result<std::optional<utterance_record>> feed(utterance_assembler& a, std::vector<received> messages) {
    result<std::optional<utterance_record>> last = std::optional<utterance_record>{};
    for (auto& m : messages) {
        last = a.add(std::move(m));
        if (!last) return last;
    }
    return last;
}

TEST_CASE("a correct utterance becomes a record", "[client]") {
    utterance_assembler a;
    auto r = feed(a, utterance(1));
    REQUIRE(r.ok());
    REQUIRE(*r);
    CHECK((*r)->started->context == 1);
    CHECK((*r)->audio.size() == 3);
    CHECK((*r)->pcm16_bytes().size() == 400);
    CHECK((*r)->audio_us((*r)->audio[0]) == 100 * 1'000'000 / 24000);
    REQUIRE((*r)->metrics);
    CHECK((*r)->done->messages == 3);
}

TEST_CASE("a queued utterance's early started is kept for the next record", "[client]") {
    utterance_assembler a;
    auto first = utterance(1);
    first.insert(first.begin() + 2, started(2));
    auto r1 = feed(a, first);
    REQUIRE(r1.ok());
    REQUIRE(*r1);
    auto second = utterance(2);
    second.erase(second.begin());
    auto r2 = feed(a, second);
    REQUIRE(r2.ok());
    REQUIRE(*r2);
    CHECK((*r2)->started->context == 2);
}

TEST_CASE("every broken promise is named", "[client]") {
    struct broken_case {
        const char* what;
        std::vector<received> messages;
    };
    const std::vector<broken_case> cases = {
        {"audio before started", {audio(1, 0, 0, 100, audio_flag::first)}},
        {"context", {started(1), audio(2, 0, 0, 100, audio_flag::first)}},
        {"sequence 2, expected 1", {started(1), audio(1, 0, 0, 100, audio_flag::first), audio(1, 2, 100, 100)}},
        {"first flag", {started(1), audio(1, 0, 0, 100)}},
        {"the last message carries a payload", {started(1), audio(1, 0, 0, 100, audio_flag::first | audio_flag::last)}},
        {"an empty message without the last flag", {started(1), audio(1, 0, 0, 0, audio_flag::first)}},
        {"timestamp 150, expected 100", {started(1), audio(1, 0, 0, 100, audio_flag::first), audio(1, 1, 150, 100)}},
        {"done of another context", {started(1), done(2, 0)}},
        {"does not end with last", {started(1), audio(1, 0, 0, 100, audio_flag::first), metrics(1), done(1, 1)}},
        {"no metrics", {started(1), audio(1, 0, 0, 100, audio_flag::first), audio(1, 1, 100, 0, audio_flag::last), done(1, 2)}},
        {"done counts 5 messages, received 3",
         {started(1), audio(1, 0, 0, 100, audio_flag::first), metrics(1), audio(1, 1, 100, 100),
          audio(1, 2, 200, 0, audio_flag::last), done(1, 5)}},
        {"two utterances started ahead of a done", {started(1), started(2), started(3)}},
        {"closed 1001 going away", {started(1), received_close{1001, "going away"}}},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        utterance_assembler a;
        auto r = feed(a, c.messages);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.err().message, Catch::Contains(c.what));
    }
}

}  // namespace
}  // namespace megatts::client

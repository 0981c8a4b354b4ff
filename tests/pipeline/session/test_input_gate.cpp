#include "pipeline/session/input_gate.h"

#include <catch2/catch.hpp>

#include "tests/pipeline/engine/tiny_model.h"

namespace megatts {
namespace {

utterance_options ryan() {
    utterance_options o;
    o.voice = "ryan";
    return o;
}

// Applies a plan that must succeed; returns its frames' kinds as letters (s)tart (t)ext (e)nd.
std::string apply(input_gate& g, session_result<input_gate::plan> p) {
    REQUIRE(p.ok());
    std::string kinds;
    for (auto& [context, payload] : p->frames) {
        kinds += std::holds_alternative<utterance_start>(payload) ? 's'
                 : std::holds_alternative<text_chunk>(payload)    ? 't'
                                                                  : 'e';
        kinds += std::to_string(context);
    }
    g.commit(std::move(p.value()));
    return kinds;
}

TEST_CASE("the gate turns calls into frames with utterance contexts", "[session]") {
    session_limits limits;
    limits.max_queued_utterances = 1;
    input_gate g(test::tiny_model().config(), limits);
    CHECK(apply(g, g.plan_start(ryan())) == "s1");
    CHECK(apply(g, g.plan_text("a", text_end::more)) == "t1");
    CHECK(apply(g, g.plan_close(text_end::flush)) == "e1");
    // After a flush, text opens the next utterance with the same options.
    CHECK(apply(g, g.plan_text("b", text_end::flush)) == "s2t2e2");
    CHECK(g.plan_text("c", text_end::more).err().code == session_errc::too_many_utterances);
    g.finished();
    CHECK(apply(g, g.plan_text("c", text_end::end)) == "s3t3e3");
    CHECK(g.plan_text("d", text_end::more).err().code == session_errc::no_utterance);
    CHECK(g.plan_close(text_end::flush).err().code == session_errc::no_utterance);
}

TEST_CASE("a refused plan leaves the gate as it was", "[session]") {
    session_limits limits;
    limits.max_text_bytes = 4;
    input_gate g(test::tiny_model().config(), limits);
    apply(g, g.plan_start(ryan()));
    CHECK(g.plan_text("12345", text_end::more).err().code == session_errc::text_too_long);
    CHECK(apply(g, g.plan_text("1234", text_end::more)) == "t1");
    CHECK(g.plan_text("5", text_end::end).err().code == session_errc::text_too_long);
    CHECK(apply(g, g.plan_close(text_end::end)) == "e1");
    g.cancel();
    CHECK(g.plan_close(text_end::end).err().code == session_errc::no_utterance);
    g.close();
    CHECK(g.plan_start(ryan()).err().code == session_errc::session_closed);
}

}  // namespace
}  // namespace megatts

#include "pipeline/graph/stage_chain.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace megatts {
namespace {

// Splits each text chunk into one frame per character, forwards everything else.
class split_stage final : public stage {
public:
    std::string_view name() const override { return "split"; }
    void process(frame f, frame_emitter& out) override {
        auto* chunk = std::get_if<text_chunk>(&f.payload);
        if (!chunk) {
            out.emit(std::move(f));
            return;
        }
        for (char c : chunk->text) out.emit(frame{f.header, text_chunk{std::string(1, c)}});
    }
};

// Appends its tag to every text chunk.
class tag_stage final : public stage {
public:
    explicit tag_stage(std::string tag) : tag_(std::move(tag)) {}
    std::string_view name() const override { return "tag"; }
    void process(frame f, frame_emitter& out) override {
        if (auto* chunk = std::get_if<text_chunk>(&f.payload)) chunk->text += tag_;
        out.emit(std::move(f));
    }

private:
    std::string tag_;
};

TEST_CASE("a chain runs stages in order, depth first, and keeps frame order", "[graph]") {
    std::vector<std::string> seen;
    std::vector<std::unique_ptr<stage>> stages;
    stages.push_back(std::make_unique<split_stage>());
    stages.push_back(std::make_unique<tag_stage>("1"));
    stages.push_back(std::make_unique<tag_stage>("2"));
    stage_chain chain(std::move(stages), [&](frame f) {
        if (auto* chunk = std::get_if<text_chunk>(&f.payload)) seen.push_back(chunk->text);
        else if (std::holds_alternative<end_of_text>(f.payload)) seen.push_back("<end>");
        else if (std::holds_alternative<cancel_request>(f.payload)) seen.push_back("<cancel>");
    });
    chain.push(frame{{}, text_chunk{"ab"}});
    chain.push(frame{{}, end_of_text{}});
    chain.push(frame{{}, cancel_request{}});
    chain.push(frame{{}, text_chunk{"c"}});
    CHECK(seen == std::vector<std::string>{"a12", "b12", "<end>", "<cancel>", "c12"});
}

TEST_CASE("an empty chain hands frames straight to its sink", "[graph]") {
    int frames = 0;
    stage_chain chain({}, [&](frame) { ++frames; });
    chain.push(frame{{}, end_of_text{}});
    CHECK(frames == 1);
}

}  // namespace
}  // namespace megatts

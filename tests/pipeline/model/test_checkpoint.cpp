#include <catch2/catch.hpp>

#include "pipeline/model/checkpoint.h"

using namespace megatts;

TEST_CASE("golden tiny checkpoints open and validate") {
    for (const char* name : {"tiny-cv06", "tiny-cv17"}) {
        auto c = checkpoint::open(std::string(MEGATTS_FIXTURE_DIR) + "/" + name);
        INFO(name << ": " << (c ? "" : c.err().message));
        REQUIRE(c.ok());
        CHECK(c->config().code_predictor.has_projection == (std::string(name) == "tiny-cv17"));
    }
}

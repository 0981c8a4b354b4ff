// The tiny golden checkpoint (tests/fixtures/tiny-cv06), loaded once per test binary, and the
// reference synthesize() run the engine and session tests compare against.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/synthesis/reference_model.h"
#include "pipeline/synthesis/utterance.h"

namespace megatts::test {

inline const reference_model& tiny_model() {
    static const reference_model model = [] {
        auto m = reference_model::load(std::string(MEGATTS_FIXTURE_DIR) + "/tiny-cv06");
        REQUIRE(m.ok());
        return std::move(m.value());
    }();
    return model;
}

struct reference_run {
    std::vector<std::int32_t> codes;  // [frames][16]
    std::vector<float> pcm;
    utterance_summary summary;
};

inline reference_run synthesize_reference(const utterance_request& request) {
    reference_run run;
    auto summary = synthesize(tiny_model(), request, [&](std::span<const std::int32_t> c, std::span<const float> p) {
        run.codes.insert(run.codes.end(), c.begin(), c.end());
        run.pcm.insert(run.pcm.end(), p.begin(), p.end());
    });
    REQUIRE(summary.ok());
    run.summary = summary.value();
    return run;
}

}  // namespace megatts::test

// generation_setup: the sampling configuration of one utterance, from the
// checkpoint's generation_config.json and the request (seed, greedy parity mode,
// overrides), in the form every backend consumes.
//
// Contract: pure. Greedy mode keeps the talker's processors (repetition penalty,
// min-new-tokens, suppression) as the official generate() does with
// do_sample=False; it only replaces the draws by arg-max.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/reference/generator.h"
#include "pipeline/model/model_config.h"

namespace megatts {

struct sampling_request {
    bool greedy = false;
    std::uint64_t seed = 0;
    std::optional<float> temperature;  // both levels; default from generation_config.json
    std::optional<int> top_k;
    std::optional<float> top_p;
};

ref::generation_options make_generation_options(const model_config& config, const sampling_request& request);

}  // namespace megatts

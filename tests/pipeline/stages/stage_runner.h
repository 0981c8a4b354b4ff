// Runs one stage by hand in tests: collects every frame it emits.
#pragma once

#include <vector>

#include "pipeline/graph/stage.h"

namespace megatts::test {

class collected final : public frame_emitter {
public:
    void emit(frame f) override { frames.push_back(std::move(f)); }
    std::vector<frame> frames;
};

inline std::vector<frame> run(stage& s, frame f) {
    collected out;
    s.process(std::move(f), out);
    return std::move(out.frames);
}

}  // namespace megatts::test
